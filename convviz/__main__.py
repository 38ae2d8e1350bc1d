"""`python -m convviz export …`: the command line (see convviz.export.cli)."""

from __future__ import annotations

import sys

USAGE = "usage: python -m convviz export [--help] [options]"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(f"{USAGE}\n\n  export   write every stage of a layer as files (see export --help)")
        return 0 if argv else 2
    if argv[0] != "export":
        print(
            f"python -m convviz: error: unknown command '{argv[0]}' (try: export)", file=sys.stderr
        )
        return 2
    from convviz.export.cli import main as export

    return export(argv[1:])


if __name__ == "__main__":
    sys.exit(main())

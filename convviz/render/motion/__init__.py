"""The backward pass in motion: cells that glide, fade and turn, with the engine's numbers.

- `model.py`: a motion as cells, scenes and keyframes (no plotting library);
- `scenes.py`: each transformation's cell groups, read from the engine's arrays;
- `motions.py`: the motions assembled (dilate, pad, rotate, mask, the whole pass, the weight
  window);
- `frames.py`: a motion as plotly frames for the player; `gif.py`: the same frames as a GIF.
"""

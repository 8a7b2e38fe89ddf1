"""The command layer: `gan-sru train | generate | evaluate | profile` (main.py parses, one module per verb).

Nothing below this layer imports it."""

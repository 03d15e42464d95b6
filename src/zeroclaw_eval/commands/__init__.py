"""Commands of the ``zeroclaw eval`` group kept out of :mod:`zeroclaw_eval.cli`.

Each module attaches its command to the group when imported; ``cli`` imports
them all at its end, so the console script always has every command.
"""

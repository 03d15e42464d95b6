"""pytest-zeroclaw-eval: zeroclaw-eval fixtures collected and run as pytest items.

The plugin itself is :mod:`pytest_zeroclaw_eval.plugin`, loaded by pytest through
the ``pytest11`` entry point.
"""

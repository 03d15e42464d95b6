"""``python -m zeroclaw_eval``: the ``zeroclaw`` command, where no script is on PATH."""

from zeroclaw_eval.cli import main

main(prog_name="zeroclaw")

"""Run modes: the kind that plays the model's side, and the notes it leaves."""

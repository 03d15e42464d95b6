"""Running admitted cases: the session, the runner, supervision and recording."""

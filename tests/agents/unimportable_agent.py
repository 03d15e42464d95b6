import no_such_dependency_of_the_agent  # noqa: F401

NUMBER = 3
TITLE = "todo"


def run(ctx):
    from bench.common import WorkloadResult
    return WorkloadResult(NUMBER, TITLE, skipped="todo")

from rich.traceback import install

install()
exec(compile(open("crash.py").read(), "crash.py", "exec"))

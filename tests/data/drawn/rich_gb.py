from rich.traceback import install

install()
exec(compile(open("gb.py").read(), "gb.py", "exec"))

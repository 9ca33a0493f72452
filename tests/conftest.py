"""What every test folder shares at the suite's start (each folder's own conftest.py re-exports
its helpers)."""

import signal

# A suite started in the background by a shell without job control (`… &` in a script, nohup in
# a subshell) inherits SIGINT ignored, and so would every command it starts: Python then sets no
# KeyboardInterrupt, and each test that presses Ctrl+C in a command waits out its timeout. A
# handler of Python's own is put back to the default in a child at exec, so the commands the
# tests start hear Ctrl+C however the suite was launched.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

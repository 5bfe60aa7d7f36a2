"""tap.py -- a tiny Test Anything Protocol writer for the integration tests.

automake's tap-driver reads standard output: "ok N - name", "not ok N - name",
"# diagnostics" and the plan "1..N" (printed last, by done()). A failing
assertion prints what it got and what it wanted. An exception that escapes a
test is reported as one failed test with its traceback, so a broken test file
never leaves the driver without a plan.
"""

import sys
import traceback

_count = 0
_failed = 0
_finished = False


def _out(line):
    print(line, flush=True)


def diag(msg):
    """Print MSG (any object, any number of lines) as TAP diagnostics."""
    for line in str(msg).splitlines() or ['']:
        _out('# ' + line)


def ok(cond, name=''):
    """One test: passes when COND is true. Returns COND as a bool."""
    global _count, _failed
    _count += 1
    cond = bool(cond)
    if not cond:
        _failed += 1
    name = name.replace('\n', ' ').replace('#', '\\#')
    _out('%sok %d - %s' % ('' if cond else 'not ', _count, name))
    return cond


def is_(got, want, name=''):
    """Passes when GOT == WANT; on failure shows both."""
    if ok(got == want, name):
        return True
    diag('       got: %r' % (got,))
    diag('  expected: %r' % (want,))
    return False


def isnt(got, unwanted, name=''):
    """Passes when GOT != UNWANTED."""
    if ok(got != unwanted, name):
        return True
    diag('       got: %r' % (got,))
    diag('  expected anything else')
    return False


def like(got, regex, name=''):
    """Passes when GOT (a string) matches the regular expression REGEX."""
    import re
    if ok(isinstance(got, str) and re.search(regex, got) is not None, name):
        return True
    diag('       got: %r' % (got,))
    diag('  expected to match: %r' % (regex,))
    return False


def skip(reason, count=1):
    """Record COUNT tests as skipped (they count as passed)."""
    global _count
    for _ in range(count):
        _count += 1
        _out('ok %d # SKIP %s' % (_count, reason))


def skip_all(reason):
    """Skip the whole file: no test ran, exit status 0."""
    global _finished
    _finished = True
    _out('1..0 # SKIP %s' % reason)
    sys.exit(0)


def bail_out(reason):
    """Stop everything: the rest of the file cannot run (e.g. no server)."""
    global _finished
    _finished = True
    _out('Bail out! %s' % reason.replace('\n', ' '))
    sys.exit(1)


def failed():
    """Number of failed tests so far."""
    return _failed


def done():
    """Print the plan and exit: 0 if every test passed, 1 otherwise."""
    global _finished
    _finished = True
    _out('1..%d' % _count)
    if _failed:
        diag('failed %d of %d tests' % (_failed, _count))
    sys.exit(1 if _failed else 0)


def _excepthook(etype, value, tb):
    # An exception escaped the test file: one failed test with the
    # traceback, and the plan, so the driver reports a failure, not a hang
    # or a missing plan.
    if _finished or etype in (KeyboardInterrupt,):
        sys.__excepthook__(etype, value, tb)
        return
    ok(False, 'unexpected exception: %s: %s' % (etype.__name__, value))
    diag(''.join(traceback.format_exception(etype, value, tb)))
    _out('1..%d' % _count)
    sys.stdout.flush()


sys.excepthook = _excepthook

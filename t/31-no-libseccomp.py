#!/usr/bin/python3
# 31-no-libseccomp: the installed programs carry no libseccomp runtime
# dependency, neither as a shared library (DT_NEEDED) nor linked in
# statically (its symbols); only the build-time generator, which is never
# installed, uses it. The generator is the control: the same check finds it.
import os
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))
import cdm   # noqa: E402
import tap   # noqa: E402

READELF = '/usr/bin/readelf'
# Names only libseccomp defines; a program that merely mentions "seccomp"
# (a config key, bwrap's --seccomp) has none of them.
SYMBOLS = (b'seccomp_init', b'seccomp_rule_add', b'seccomp_export_bpf')

if not os.access(READELF, os.X_OK):
    tap.skip_all('readelf not found (binutils)')


def needed(path):
    r = subprocess.run([READELF, '-d', path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=30)
    return [line.split('[', 1)[1].rstrip(']')
            for line in r.stdout.splitlines() if '(NEEDED)' in line and '[' in line]


def uses_libseccomp(path):
    """(via NEEDED, via symbols) for one ELF file."""
    libs = needed(path)
    with open(path, 'rb') as f:
        data = f.read()
    return ([lib for lib in libs if 'libseccomp' in lib],
            [s.decode() for s in SYMBOLS if s in data])


def is_elf(path):
    try:
        with open(path, 'rb') as f:
            return f.read(4) == b'\x7fELF'
    except OSError:
        return False


# What `make install` puts in bin and pkglibexec: codumentor and the helper
# (and any worker beside it), wherever the build left them.
build = cdm.BUILDDIR
candidates = [os.path.join(build, 'codumentor')]
for d in (build, os.path.join(build, 'sandbox')):
    if os.path.isdir(d):
        for name in sorted(os.listdir(d)):
            p = os.path.join(d, name)
            if name.startswith('codumentor-') and os.access(p, os.X_OK) and is_elf(p):
                candidates.append(p)

tap.ok(is_elf(candidates[0]), 'the codumentor binary is built (%s)' % candidates[0])
for path in candidates:
    if not is_elf(path):
        continue
    libs, syms = uses_libseccomp(path)
    rel = os.path.relpath(path, build)
    tap.ok(not libs, '%s: no libseccomp in DT_NEEDED' % rel) or tap.diag(', '.join(libs))
    tap.ok(not syms, '%s: no libseccomp code linked in' % rel) or tap.diag(', '.join(syms))

gen = os.path.join(build, 'sandbox', 'seccomp-gen')
if is_elf(gen):
    libs, syms = uses_libseccomp(gen)
    tap.ok(libs or syms, 'control: the same check finds libseccomp in sandbox/seccomp-gen')
else:
    tap.skip('sandbox/seccomp-gen not built')

tap.done()

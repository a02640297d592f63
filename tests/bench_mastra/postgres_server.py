"""A throwaway PostgreSQL server for one test module: Debian's binaries, a temp cluster, 127.0.0.1.

``start_postgres()`` returns a :class:`Server` (a ``postgresql://`` URL of an empty database) or
raises :class:`CannotStart` with the reason (no binaries, initdb or start failed). As root the
server runs as the ``postgres`` user (PostgreSQL refuses root), through ``runuser``.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path


class CannotStart(RuntimeError):
    """The server could not be started here; the message says why."""


@dataclass
class Server:
    data_dir: Path
    port: int
    bin_dir: Path
    prefix: list[str]

    @property
    def url(self) -> str:
        return f"postgresql://omlab@127.0.0.1:{self.port}/mastra"

    def stop(self) -> None:
        subprocess.run(
            [*self.prefix, str(self.bin_dir / "pg_ctl"), "-D", str(self.data_dir / "data"), "-m", "immediate", "stop"],
            capture_output=True,
            check=False,
        )
        shutil.rmtree(self.data_dir, ignore_errors=True)


def _bin_dir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    pg_ctl = shutil.which("pg_ctl")
    if pg_ctl:
        return Path(os.path.realpath(pg_ctl)).parent
    raise CannotStart("no PostgreSQL server binaries (apt-get install postgresql)")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_postgres() -> Server:
    """Start a server with database ``mastra`` owned by ``omlab`` (trust auth, 127.0.0.1 only)."""
    bin_dir = _bin_dir()
    prefix: list[str] = []
    directory = Path(tempfile.mkdtemp(prefix="omlab-pg-"))
    if os.geteuid() == 0:
        if not shutil.which("runuser"):
            raise CannotStart("running as root without runuser to start PostgreSQL as the postgres user")
        try:
            shutil.chown(directory, user="postgres")
        except (LookupError, PermissionError) as error:
            raise CannotStart(f"no postgres user to run the server as ({error})") from None
        prefix = ["runuser", "-u", "postgres", "--"]
    port = _free_port()

    def run(*args: str) -> None:
        done = subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            shutil.rmtree(directory, ignore_errors=True)
            raise CannotStart(f"{Path(args[0]).name} failed: {(done.stderr or done.stdout).strip()[-400:]}")

    data = str(directory / "data")
    run(str(bin_dir / "initdb"), "-D", data, "-U", "omlab", "--auth=trust", "-E", "UTF8", "--no-sync")
    options = f"-p {port} -k {directory} -c listen_addresses=127.0.0.1 -F"
    run(str(bin_dir / "pg_ctl"), "-D", data, "-o", options, "-l", str(directory / "log"), "-w", "-t", "60", "start")
    server = Server(directory, port, bin_dir, prefix)
    try:
        import psycopg
    except ImportError:
        server.stop()
        raise CannotStart("psycopg is not installed (pip install 'omlab[postgres]')") from None
    try:
        with psycopg.connect(f"postgresql://omlab@127.0.0.1:{port}/postgres", autocommit=True) as connection:
            connection.execute("CREATE DATABASE mastra")
    except psycopg.Error as error:
        server.stop()
        raise CannotStart(f"cannot create the test database: {error}") from None
    return server

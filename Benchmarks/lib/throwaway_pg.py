"""A throwaway PostgreSQL for the benchmarks: initdb + pg_ctl on a free loopback port in a
directory of its own, as the `postgres` user when run as root (as Benchmarks/lib/pg.sh and
Tests/IngestdTesting/PostgresServer.swift do). Python standard library only."""
import os
import shutil
import socket
import subprocess


def free_port():
    """A loopback port nothing listens on now."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class ThrowawayPostgres:
    """Started in `directory` (emptied first) with database and superuser `ingestd`; `options`
    are added to the server's command line (e.g. "-c log_statement=all")."""

    def __init__(self, directory, options=""):
        versions = sorted((d for d in os.listdir("/usr/lib/postgresql") if d.isdigit()), key=int) \
            if os.path.isdir("/usr/lib/postgresql") else []
        if not versions:
            raise SystemExit("needs PostgreSQL (apt-get install postgresql; `make test-deps`)")
        self.bin = f"/usr/lib/postgresql/{versions[-1]}/bin"
        self.dir = directory
        shutil.rmtree(directory, ignore_errors=True)
        os.makedirs(directory)
        self.port = free_port()
        self.root = os.geteuid() == 0
        if self.root:
            subprocess.run(["chown", "postgres:postgres", directory], check=True)
        self.run("initdb", "-D", f"{directory}/data", "-U", "ingestd", "-A", "trust", "--no-sync", "-E", "UTF8")
        server = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {directory} -c max_connections=200 -c fsync=off {options}"
        self.run("pg_ctl", "-D", f"{directory}/data", "-l", f"{directory}/server.log", "-w", "-t", "60", "-o", server, "start")
        self.run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "ingestd", "ingestd")
        self.url = f"postgres://ingestd@127.0.0.1:{self.port}/ingestd"
        self.log = f"{directory}/server.log"

    def run(self, tool, *args):
        command = [f"{self.bin}/{tool}", *args]
        if self.root:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)

    def sql(self, statement, check=True):
        """The statement's rows as psql prints them unaligned (`|` between fields); "" when it
        fails and `check` is false."""
        result = subprocess.run(["psql", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(self.port),
                                 "-U", "ingestd", "-d", "ingestd", "-c", statement], check=check, capture_output=True, text=True)
        return result.stdout.strip() if result.returncode == 0 else ""

    def stop(self):
        try:
            self.run("pg_ctl", "-D", f"{self.dir}/data", "-m", "immediate", "-w", "stop")
        except subprocess.CalledProcessError:
            pass

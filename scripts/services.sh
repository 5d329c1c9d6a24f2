# shellcheck shell=bash
# Sourced by test.sh and bench.sh: starts throwaway database servers for the
# live tests and exports their DSNs. It never touches the machine's own
# servers, users, passwords or configuration files, and never uses the
# servers that may already run on the usual ports.
#
#   start_services postgres mysql redis etcd zookeeper
#
# Each server gets its own directory under one temporary directory
# ($SERVICES_DIR, under $TMPDIR or /tmp), listens on 127.0.0.1 only, on a
# free port chosen here (never 5432, 3306, 6379, 2379, 2380 or 2181), and
# is stopped, its files removed, when the sourcing script exits: normally,
# on an error, on Ctrl-C or SIGTERM, and (through a watchdog) even when the
# script itself is killed.
#
#   postgres   initdb + pg_ctl, trust auth inside the throwaway cluster,
#              database "test":  SCHEDLOCK_TEST_POSTGRES_DSN
#   mysql      mariadb-install-db + mariadbd, root without password inside
#              the throwaway instance, database "test", performance_schema
#              on (MariaDB's default is off) so that the tests see the
#              connection attributes:  SCHEDLOCK_TEST_MYSQL_DSN
#   redis      redis-server, no persistence:  SCHEDLOCK_TEST_REDIS_DSN
#   etcd       one-member etcd:  SCHEDLOCK_TEST_ETCD_DSN
#   nats       nats-server with JetStream, its store in the service
#              directory:  SCHEDLOCK_TEST_NATS_DSN
#   mongodb    FerretDB (MongoDB's wire protocol) over SQLite, built once
#              from its Go module into ${XDG_CACHE_HOME:-~/.cache}/schedlock:
#              SCHEDLOCK_TEST_MONGODB_DSN
#   dynamodb   dynalite (DynamoDB's API in Node.js, in memory; npm package
#              cached under ~/.cache/schedlock):  SCHEDLOCK_TEST_DYNAMODB_DSN
#              (and SCHEDLOCK_TEST_DYNALITE, its cli.js, for the restart test)
#   kubernetes the test apiserver of test/kubeapiserver (k8s.io/apiserver
#              serving coordination.k8s.io/v1 Leases) over the etcd
#              started before it, built once into the cache directory;
#              namespace "forbidden" is denied to its token:
#              SCHEDLOCK_TEST_KUBERNETES_DSN (k8s://default?kubeconfig=FILE)
#   zookeeper  standalone ZooKeeper:  SCHEDLOCK_TEST_ZK_DSN (and Apache
#              Curator's jars and a JDK for the Curator test)
#
# A DSN variable the caller already exported wins: that server is not
# started (point one at your own server, or at a product not run here).
# A missing server binary is installed from its Debian package (apt-get,
# as root). As root, PostgreSQL runs as user postgres and MariaDB as user
# mysql, because neither runs as root. Every wait is bounded by
# SERVICE_WAIT_SECONDS (default 60); a server that does not come up stops
# the script with the tail of its log.

SERVICE_WAIT_SECONDS=${SERVICE_WAIT_SECONDS:-60}

log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}

# ---- exit hooks -----------------------------------------------------------

# at_exit CMD: run CMD (a shell string) when the script exits, after the
# hooks registered later (last in, first out).
services_exit_hooks=()
at_exit() { services_exit_hooks=("$1" "${services_exit_hooks[@]}"); }

services_run_exit_hooks() {
	local status=$? hook
	trap - EXIT INT TERM
	set +e
	for hook in "${services_exit_hooks[@]}"; do
		eval "$hook"
	done
	services_exit_hooks=()
	exit "$status"
}
trap services_run_exit_hooks EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- helpers --------------------------------------------------------------

is_root() { [[ $(id -u) == 0 ]]; }

# as_user USER CMD...: run CMD as USER when root (initdb and pg_ctl refuse
# root), as the current user otherwise; in $SERVICES_DIR, which USER can
# enter.
as_user() {
	local user=$1
	shift
	if is_root; then
		(cd "$SERVICES_DIR" && runuser -u "$user" -- "$@")
	else
		"$@"
	fi
}

apt_updated=
apt_install() {
	is_root || die "$* missing: install the Debian packages $* (apt-get needs root)"
	if [[ -z $apt_updated ]]; then
		log "apt-get update"
		apt-get update -q >/dev/null || die "apt-get update failed"
		apt_updated=1
	fi
	log "apt-get install $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/dev/null ||
		die "apt-get install $* failed"
}

# show_log NAME FILE: the last lines of a server's log, for a failure.
show_log() {
	log "last lines of $1's log ($2):"
	tail -n 30 "$2" >&2 2>/dev/null || true
}

# Ports taken by the machine's own servers, and those picked in this run.
services_avoid_ports=" 5432 3306 6379 2379 2380 2181 "

# port_in_use PORT: something accepts connections on 127.0.0.1:PORT.
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# pick_port VAR: set VAR to a port on 127.0.0.1 that nothing listens on,
# from 20000-29999 (below Linux's ephemeral range, so no outgoing
# connection holds it).
pick_port() {
	local -n picked=$1
	local i p
	for ((i = 0; i < 200; i++)); do
		p=$((20000 + RANDOM % 10000))
		[[ $services_avoid_ports == *" $p "* ]] && continue
		port_in_use "$p" && continue
		services_avoid_ports+="$p "
		picked=$p
		return 0
	done
	die "no free port on 127.0.0.1 in 20000-29999 after 200 tries"
}

# wait_ready NAME PID LOG CMD...: run CMD every 0.2s until it succeeds.
# Returns 1 when process PID exits first (the caller may retry on another
# port); stops the script when SERVICE_WAIT_SECONDS pass.
wait_ready() {
	local name=$1 pid=$2 logfile=$3 i
	shift 3
	for ((i = 0; i < SERVICE_WAIT_SECONDS * 5; i++)); do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			return 1
		fi
		sleep 0.2
	done
	show_log "$name" "$logfile"
	die "$name did not answer within ${SERVICE_WAIT_SECONDS}s (last try: $*)"
}

# port_clash LOG: the server failed because its port was taken meanwhile.
port_clash() { grep -qiE 'address already in use|could not bind|bind.*in use' "$1" 2>/dev/null; }

# stop_pid NAME PID: SIGTERM, up to 30s for the process to exit, then SIGKILL.
stop_pid() {
	local name=$1 pid=$2 i
	kill -TERM "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 150; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.2
	done
	log "warning: $name (pid $pid) ignored SIGTERM for 30s; killing it"
	kill -KILL "$pid" 2>/dev/null || true
}

# services_dir_create: the one temporary directory of this run, removed at
# exit (after the servers in it are stopped: hooks run last in, first out).
SERVICES_DIR=
services_dir_create() {
	[[ -n $SERVICES_DIR ]] && return 0
	SERVICES_DIR=$(mktemp -d "${TMPDIR:-/tmp}/schedlock-test.XXXXXX") || die "cannot create a temporary directory"
	chmod 755 "$SERVICES_DIR" # the postgres and mysql users enter it
	at_exit 'rm -rf "$SERVICES_DIR"'
}

# ---- PostgreSQL -----------------------------------------------------------

pg_bin=
find_postgres() {
	local dirs
	dirs=$(compgen -G '/usr/lib/postgresql/*/bin/initdb' | sort -V | tail -n 1)
	pg_bin=${dirs%/initdb}
}

start_postgres() {
	find_postgres
	if [[ -z $pg_bin ]]; then
		apt_install postgresql postgresql-client
		find_postgres
		[[ -n $pg_bin ]] || die "no initdb under /usr/lib/postgresql/*/bin after installing postgresql"
	fi
	local dir=$SERVICES_DIR/postgres port attempt
	mkdir -p "$dir"
	is_root && chown postgres: "$dir"
	log "PostgreSQL: initdb ($pg_bin)"
	as_user postgres "$pg_bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
		{
			show_log "initdb" "$dir/initdb.log"
			die "PostgreSQL initdb failed"
		}
	for attempt in 1 2 3; do
		pick_port port
		rm -f "$dir/server.log"
		# Trust authentication and no durability: this cluster lives for
		# one test run, on loopback only.
		if as_user postgres "$pg_bin/pg_ctl" start -D "$dir/data" -l "$dir/server.log" -w -t "$SERVICE_WAIT_SECONDS" \
			-o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
			>"$dir/pg_ctl.log" 2>&1; then
			break
		fi
		if [[ $attempt -lt 3 ]] && port_clash "$dir/server.log"; then
			log "PostgreSQL: port $port was taken meanwhile; trying another"
			continue
		fi
		show_log "PostgreSQL" "$dir/server.log"
		die "PostgreSQL did not start on 127.0.0.1:$port within ${SERVICE_WAIT_SECONDS}s"
	done
	services_pg_dir=$dir
	at_exit 'stop_postgres'
	"$pg_bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -X -q -w -v ON_ERROR_STOP=1 \
		-c 'CREATE DATABASE test' >/dev/null || die "PostgreSQL: CREATE DATABASE test failed"
	export SCHEDLOCK_TEST_POSTGRES_DSN="postgres://postgres@127.0.0.1:$port/test?sslmode=disable"
	log "PostgreSQL $("$pg_bin/postgres" -V | awk '{print $3}') on 127.0.0.1:$port"
}

services_pg_dir=
stop_postgres() {
	[[ -n $services_pg_dir && -f $services_pg_dir/data/postmaster.pid ]] || return 0
	as_user postgres "$pg_bin/pg_ctl" stop -D "$services_pg_dir/data" -m fast -w -t 30 >/dev/null 2>&1 ||
		as_user postgres "$pg_bin/pg_ctl" stop -D "$services_pg_dir/data" -m immediate -w -t 30 >/dev/null 2>&1 ||
		log "warning: the throwaway PostgreSQL in $services_pg_dir did not stop"
}

# ---- MariaDB --------------------------------------------------------------

start_mysql() {
	if ! command -v mariadbd >/dev/null 2>&1 && [[ ! -x /usr/sbin/mariadbd ]] || ! command -v mariadb-install-db >/dev/null 2>&1; then
		apt_install mariadb-server mariadb-client
	fi
	local mariadbd
	mariadbd=$(command -v mariadbd || echo /usr/sbin/mariadbd)
	local dir=$SERVICES_DIR/mariadb port attempt pid user=()
	mkdir -p "$dir/data" "$dir/tmp"
	if is_root; then
		chown -R mysql: "$dir"
		user=(--user=mysql)
	fi
	log "MariaDB: mariadb-install-db"
	mariadb-install-db --no-defaults "${user[@]}" --datadir="$dir/data" --auth-root-authentication-method=normal \
		--skip-test-db >"$dir/install-db.log" 2>&1 ||
		{
			show_log "mariadb-install-db" "$dir/install-db.log"
			die "MariaDB mariadb-install-db failed"
		}
	for attempt in 1 2 3; do
		pick_port port
		rm -f "$dir/error.log"
		# Background jobs of a non-interactive shell ignore SIGINT: Ctrl-C
		# reaches the tests, and the exit hook stops the server.
		"$mariadbd" --no-defaults "${user[@]}" --datadir="$dir/data" --tmpdir="$dir/tmp" \
			--port="$port" --bind-address=127.0.0.1 --socket="$dir/mysqld.sock" --pid-file="$dir/mariadbd.pid" \
			--log-error="$dir/error.log" --max-connections=500 --skip-name-resolve \
			--innodb-flush-log-at-trx-commit=0 --innodb-buffer-pool-size=64M \
			--performance-schema=ON </dev/null >"$dir/stdout.log" 2>&1 &
		pid=$!
		if wait_ready "MariaDB" "$pid" "$dir/error.log" \
			mariadb-admin --no-defaults -h127.0.0.1 -P"$port" -uroot --connect-timeout=2 ping; then
			break
		fi
		if [[ $attempt -lt 3 ]] && port_clash "$dir/error.log"; then
			log "MariaDB: port $port was taken meanwhile; trying another"
			continue
		fi
		show_log "MariaDB" "$dir/error.log"
		die "MariaDB exited before answering on 127.0.0.1:$port"
	done
	services_my_pid=$pid
	at_exit 'stop_pid MariaDB "$services_my_pid"'
	mariadb --no-defaults -h127.0.0.1 -P"$port" -uroot --connect-timeout=5 -e 'CREATE DATABASE IF NOT EXISTS test' ||
		die "MariaDB: CREATE DATABASE test failed"
	export SCHEDLOCK_TEST_MYSQL_DSN="root@tcp(127.0.0.1:$port)/test"
	log "MariaDB $("$mariadbd" --version | awk '{print $3}') on 127.0.0.1:$port"
}

# ---- Redis ----------------------------------------------------------------

start_redis() {
	command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 || apt_install redis-server redis-tools
	local dir=$SERVICES_DIR/redis port attempt pid
	mkdir -p "$dir"
	for attempt in 1 2 3; do
		pick_port port
		rm -f "$dir/server.log"
		redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
			--daemonize no --logfile "$dir/server.log" </dev/null >/dev/null 2>&1 &
		pid=$!
		if wait_ready "Redis" "$pid" "$dir/server.log" redis_ping "$port"; then
			break
		fi
		if [[ $attempt -lt 3 ]] && port_clash "$dir/server.log"; then
			log "Redis: port $port was taken meanwhile; trying another"
			continue
		fi
		show_log "Redis" "$dir/server.log"
		die "Redis exited before answering on 127.0.0.1:$port"
	done
	services_redis_pid=$pid
	at_exit 'stop_pid Redis "$services_redis_pid"'
	export SCHEDLOCK_TEST_REDIS_DSN="redis://127.0.0.1:$port/0"
	log "Redis $(redis-server --version | grep -o 'v=[^ ]*' | cut -c3-) on 127.0.0.1:$port"
}

redis_ping() { [[ $(redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null) == PONG ]]; }

# ---- etcd -----------------------------------------------------------------

start_etcd() {
	command -v etcd >/dev/null 2>&1 && command -v etcdctl >/dev/null 2>&1 || apt_install etcd-server etcd-client
	local dir=$SERVICES_DIR/etcd port peer attempt pid
	mkdir -p "$dir"
	for attempt in 1 2 3; do
		pick_port port
		pick_port peer
		rm -rf "$dir/data"
		etcd --name schedlock-test --data-dir "$dir/data" \
			--listen-client-urls "http://127.0.0.1:$port" --advertise-client-urls "http://127.0.0.1:$port" \
			--listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
			--initial-cluster "schedlock-test=http://127.0.0.1:$peer" --initial-cluster-state new \
			</dev/null >"$dir/server.log" 2>&1 &
		pid=$!
		if wait_ready "etcd" "$pid" "$dir/server.log" \
			env ETCDCTL_API=3 etcdctl --endpoints="http://127.0.0.1:$port" --dial-timeout=2s endpoint health; then
			break
		fi
		if [[ $attempt -lt 3 ]] && port_clash "$dir/server.log"; then
			log "etcd: port $port or $peer was taken meanwhile; trying others"
			continue
		fi
		show_log "etcd" "$dir/server.log"
		die "etcd exited before answering on 127.0.0.1:$port"
	done
	services_etcd_pid=$pid
	at_exit 'stop_pid etcd "$services_etcd_pid"'
	export SCHEDLOCK_TEST_ETCD_DSN="etcd://127.0.0.1:$port/schedlock-test"
	log "etcd $(etcd --version | awk '/^etcd Version/ {print $3}') on 127.0.0.1:$port"
}

# ---- NATS -----------------------------------------------------------------

start_nats() {
	command -v nats-server >/dev/null 2>&1 || apt_install nats-server
	local dir=$SERVICES_DIR/nats port attempt pid
	mkdir -p "$dir"
	for attempt in 1 2 3; do
		pick_port port
		rm -rf "$dir/data"
		nats-server -a 127.0.0.1 -p "$port" -js -sd "$dir/data" </dev/null >"$dir/server.log" 2>&1 &
		pid=$!
		if wait_ready "NATS" "$pid" "$dir/server.log" grep -q "Server is ready" "$dir/server.log"; then
			break
		fi
		if [[ $attempt -lt 3 ]] && port_clash "$dir/server.log"; then
			log "NATS: port $port was taken meanwhile; trying another"
			continue
		fi
		show_log "NATS" "$dir/server.log"
		die "nats-server exited before answering on 127.0.0.1:$port"
	done
	services_nats_pid=$pid
	at_exit 'stop_pid NATS "$services_nats_pid"'
	export SCHEDLOCK_TEST_NATS_DSN="nats://127.0.0.1:$port/schedlock-test"
	log "NATS $(nats-server --version | awk '{print $2}') on 127.0.0.1:$port"
}

# ---- MongoDB (FerretDB) ---------------------------------------------------

# No MongoDB server is packaged for Debian; FerretDB speaks MongoDB's wire
# protocol over SQLite. It is built once from its Go module into a cache
# directory outside the clone, keyed by its version, and rebuilt when the
# binary is missing. Its build/version/version.txt is generated by its own
# build scripts and absent from the module (the binary panics at start
# without it), so the module is copied and the file written before building.
ferretdb_version=v1.24.2
ferretdb_cache=${XDG_CACHE_HOME:-$HOME/.cache}/schedlock/ferretdb-$ferretdb_version
ferretdb_bin=$ferretdb_cache/ferretdb

build_ferretdb() {
	[[ -x $ferretdb_bin ]] && return 0
	command -v go >/dev/null 2>&1 || die "go is needed to build FerretDB $ferretdb_version"
	local modsrc tmp
	log "building FerretDB $ferretdb_version into $ferretdb_cache (once)"
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/ferretdb-build.XXXXXX") || die "cannot create a build directory"
	modsrc=$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "github.com/FerretDB/FerretDB@$ferretdb_version" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[[ -n $modsrc && -d $modsrc ]] || {
		rm -rf "$tmp"
		die "go mod download github.com/FerretDB/FerretDB@$ferretdb_version failed"
	}
	cp -r "$modsrc/." "$tmp/src" 2>/dev/null || cp -r "$modsrc" "$tmp/src"
	chmod -R u+w "$tmp/src"
	printf '%s\n' "$ferretdb_version" >"$tmp/src/build/version/version.txt"
	mkdir -p "$ferretdb_cache"
	(cd "$tmp/src" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -o "$ferretdb_bin.tmp.$$" ./cmd/ferretdb) || {
		rm -rf "$tmp"
		die "building FerretDB $ferretdb_version failed"
	}
	mv "$ferretdb_bin.tmp.$$" "$ferretdb_bin"
	rm -rf "$tmp"
}

start_mongodb() {
	build_ferretdb
	local dir=$SERVICES_DIR/mongodb port attempt pid
	mkdir -p "$dir"
	for attempt in 1 2 3; do
		pick_port port
		rm -rf "$dir/data" "$dir/state"
		mkdir -p "$dir/data" "$dir/state"
		"$ferretdb_bin" --listen-addr="127.0.0.1:$port" --handler=sqlite \
			--sqlite-url="file:$dir/data/" --state-dir="$dir/state" \
			--telemetry=disable --debug-addr=- </dev/null >"$dir/server.log" 2>&1 &
		pid=$!
		if wait_ready "FerretDB" "$pid" "$dir/server.log" port_in_use "$port"; then
			break
		fi
		if [[ $attempt -lt 3 ]] && port_clash "$dir/server.log"; then
			log "FerretDB: port $port was taken meanwhile; trying another"
			continue
		fi
		show_log "FerretDB" "$dir/server.log"
		die "FerretDB exited before answering on 127.0.0.1:$port"
	done
	services_mongodb_pid=$pid
	at_exit 'stop_pid FerretDB "$services_mongodb_pid"'
	export SCHEDLOCK_TEST_MONGODB_DSN="mongodb://127.0.0.1:$port/schedlock_test"
	log "FerretDB $ferretdb_version (MongoDB wire protocol, SQLite) on 127.0.0.1:$port"
}

# ---- DynamoDB (dynalite) ----------------------------------------------------

# dynalite is a DynamoDB implementation in Node.js, run in memory; there
# is no DynamoDB server here. Installed once per version into the cache
# (its install scripts skipped: only its optional LevelDB store builds
# native code, and the in-memory store needs none), and again when missing.
dynalite_version=4.0.0

dynalite_cli() {
	local cache=${XDG_CACHE_HOME:-$HOME/.cache}/schedlock/dynalite-$dynalite_version tmp
	if [[ ! -f $cache/node_modules/dynalite/cli.js ]]; then
		command -v node >/dev/null 2>&1 || apt_install nodejs
		command -v npm >/dev/null 2>&1 || apt_install npm
		tmp=$cache.tmp.$$
		rm -rf "$tmp" && mkdir -p "$tmp" || die "cannot create $tmp"
		log "dynalite: installing $dynalite_version into $cache"
		(cd "$tmp" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error "dynalite@$dynalite_version" >&2) ||
			die "npm install dynalite@$dynalite_version failed"
		rm -rf "$cache" && mv "$tmp" "$cache" || die "cannot move dynalite into $cache"
	fi
	echo "$cache/node_modules/dynalite/cli.js"
}

start_dynamodb() {
	local cli dir=$SERVICES_DIR/dynamodb port attempt pid
	cli=$(dynalite_cli) || exit 1
	mkdir -p "$dir"
	for attempt in 1 2 3; do
		pick_port port
		node "$cli" --host 127.0.0.1 --port "$port" --createTableMs 20 --deleteTableMs 20 --updateTableMs 20 \
			</dev/null >"$dir/server.log" 2>&1 &
		pid=$!
		if wait_ready "dynalite" "$pid" "$dir/server.log" grep -q "listening" "$dir/server.log"; then
			break
		fi
		if [[ $attempt -lt 3 ]] && port_clash "$dir/server.log"; then
			log "dynalite: port $port was taken meanwhile; trying another"
			continue
		fi
		show_log "dynalite" "$dir/server.log"
		die "dynalite exited before answering on 127.0.0.1:$port"
	done
	services_dynamodb_pid=$pid
	at_exit 'stop_pid dynalite "$services_dynamodb_pid"'
	# dynalite checks that requests are signed, not by whom: any static
	# credentials do.
	export SCHEDLOCK_TEST_DYNAMODB_DSN="dynamodb://schedlock:schedlock@us-east-1?endpoint=http://127.0.0.1:$port"
	export SCHEDLOCK_TEST_DYNALITE=$cli
	log "dynalite $dynalite_version (DynamoDB API, in memory) on 127.0.0.1:$port"
}

# ---- ZooKeeper ------------------------------------------------------------

zk_jar=/usr/share/java/zookeeper.jar

start_zookeeper() {
	[[ -f $zk_jar ]] && command -v java >/dev/null 2>&1 || apt_install zookeeper
	[[ -f $zk_jar ]] || die "no $zk_jar after installing zookeeper"
	# The Curator interoperation test compiles and runs Apache Curator's
	# own InterProcessMutex (dialects/zookeeper/testdata/curator).
	[[ -f /usr/share/java/curator-recipes.jar ]] || apt_install libcurator-recipes-java
	command -v javac >/dev/null 2>&1 || apt_install default-jdk-headless
	local dir=$SERVICES_DIR/zookeeper port attempt pid classpath=$zk_jar
	# zookeeper.jar's manifest names its dependencies; slf4j-simple sends
	# the server's log to stderr, so to its log file here.
	[[ -f /usr/share/java/slf4j-simple.jar ]] && classpath+=:/usr/share/java/slf4j-simple.jar
	mkdir -p "$dir/data"
	for attempt in 1 2 3; do
		pick_port port
		cat >"$dir/zoo.cfg" <<-EOF
			tickTime=2000
			dataDir=$dir/data
			clientPort=$port
			clientPortAddress=127.0.0.1
			admin.enableServer=false
			4lw.commands.whitelist=ruok,srvr
		EOF
		java -Xmx256m -cp "$classpath" -Dzookeeper.jmx.log4j.disable=true \
			org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zoo.cfg" </dev/null >"$dir/server.log" 2>&1 &
		pid=$!
		if wait_ready "ZooKeeper" "$pid" "$dir/server.log" zk_serving "$port"; then
			break
		fi
		if [[ $attempt -lt 3 ]] && port_clash "$dir/server.log"; then
			log "ZooKeeper: port $port was taken meanwhile; trying another"
			continue
		fi
		show_log "ZooKeeper" "$dir/server.log"
		die "ZooKeeper exited before answering on 127.0.0.1:$port"
	done
	services_zk_pid=$pid
	at_exit 'stop_pid ZooKeeper "$services_zk_pid"'
	export SCHEDLOCK_TEST_ZK_DSN="zk://127.0.0.1:$port/schedlock-test"
	log "ZooKeeper $(zk_command "$port" srvr | awk -F'[ -]' '/^Zookeeper version/ {print $3}') on 127.0.0.1:$port"
}

# zk_command PORT WORD: a ZooKeeper four-letter command's answer.
zk_command() {
	(
		exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
		printf '%s' "$2" >&3
		timeout 2 cat <&3
	) 2>/dev/null
}
# zk_serving PORT: the server answers srvr with its mode (ruok answers
# imok before the server serves requests).
zk_serving() { zk_command "$1" srvr | grep -q '^Mode: '; }

# ---- Kubernetes -----------------------------------------------------------

# The test apiserver (test/kubeapiserver, its own Go module): k8s.io/apiserver's
# generic server serving coordination.k8s.io/v1 Leases over the etcd started
# here (start etcd first). Built once into the cache directory, keyed by a
# hash of its sources and go.sum, and rebuilt when missing.
kubeapiserver_src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../test/kubeapiserver" && pwd)

kubeapiserver_build() {
	local hash dir
	hash=$({ declare -f kubeapiserver_build; cd "$kubeapiserver_src" && cat go.mod go.sum ./*.go openapi/*.go; } | sha256sum | cut -c1-16)
	dir=${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/schedlock/kubeapiserver-$hash
	if [[ ! -x $dir/kubeapiserver ]]; then
		ensure_go
		log "building the test apiserver into $dir (once)"
		mkdir -p "$dir"
		# /version reports the k8s.io/apiserver release it is built from.
		(cd "$kubeapiserver_src" && CGO_ENABLED=0 go build -trimpath \
			-ldflags "-X k8s.io/component-base/version.gitVersion=$(awk '$1 == "k8s.io/apiserver" {print $2}' go.mod)-apiserver" \
			-o "$dir/kubeapiserver.tmp" .) ||
			die "building test/kubeapiserver failed"
		mv "$dir/kubeapiserver.tmp" "$dir/kubeapiserver"
	fi
	kubeapiserver_bin=$dir/kubeapiserver
}

start_kubernetes() {
	local etcd=${SCHEDLOCK_TEST_ETCD_DSN:-} dir=$SERVICES_DIR/kubernetes port attempt pid token
	[[ $etcd =~ ^etcd://([^/@,]+)(/|$) ]] ||
		die "the Kubernetes test apiserver needs the etcd service started first (an etcd:// DSN without credentials; have: ${etcd:+another}${etcd:-none})"
	kubeapiserver_build
	mkdir -p "$dir"
	token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
	for attempt in 1 2 3; do
		pick_port port
		rm -f "$dir/kubeconfig"
		"$kubeapiserver_bin" --etcd "http://${BASH_REMATCH[1]}" --prefix "/schedlock-kubeapiserver-$$-$port" \
			--port "$port" --cert-dir "$dir/certs" --token "$token" --deny-namespace forbidden \
			--namespace default --kubeconfig "$dir/kubeconfig" </dev/null >"$dir/server.log" 2>&1 &
		pid=$!
		if wait_ready "Kubernetes test apiserver" "$pid" "$dir/server.log" test -s "$dir/kubeconfig"; then
			break
		fi
		if [[ $attempt -lt 3 ]] && port_clash "$dir/server.log"; then
			log "Kubernetes test apiserver: port $port was taken meanwhile; trying another"
			continue
		fi
		show_log "Kubernetes test apiserver" "$dir/server.log"
		die "the Kubernetes test apiserver exited before serving on 127.0.0.1:$port"
	done
	services_kubernetes_pid=$pid
	at_exit 'stop_pid "Kubernetes test apiserver" "$services_kubernetes_pid"'
	export SCHEDLOCK_TEST_KUBERNETES_DSN="k8s://default?kubeconfig=$dir/kubeconfig"
	log "Kubernetes test apiserver (k8s.io/apiserver, Leases only) on 127.0.0.1:$port"
}

# ---- all of them ----------------------------------------------------------

# services_dsn_var SERVICE: the DSN variable a service exports.
services_dsn_var() {
	case $1 in
	postgres) echo SCHEDLOCK_TEST_POSTGRES_DSN ;;
	mysql) echo SCHEDLOCK_TEST_MYSQL_DSN ;;
	redis) echo SCHEDLOCK_TEST_REDIS_DSN ;;
	etcd) echo SCHEDLOCK_TEST_ETCD_DSN ;;
	zookeeper) echo SCHEDLOCK_TEST_ZK_DSN ;;
	nats) echo SCHEDLOCK_TEST_NATS_DSN ;;
	mongodb) echo SCHEDLOCK_TEST_MONGODB_DSN ;;
	dynamodb) echo SCHEDLOCK_TEST_DYNAMODB_DSN ;;
	kubernetes) echo SCHEDLOCK_TEST_KUBERNETES_DSN ;;
	*) die "unknown service $1" ;;
	esac
}

# start_services SERVICE...: start each service whose DSN variable is unset
# or empty, and a watchdog that stops them should this script be killed
# without running its exit hooks.
start_services() {
	local service var started=0
	for service in "$@"; do
		var=$(services_dsn_var "$service") || exit 1
		if [[ -n ${!var:-} ]]; then
			log "$service: using the given $var"
			export "${var?}"
			continue
		fi
		services_dir_create
		"start_$service"
		started=1
	done
	if [[ $started == 1 ]]; then
		services_start_watchdog
		log "throwaway servers in $SERVICES_DIR; stopped and removed at exit"
	fi
}

# services_start_watchdog: a background process that runs the exit hooks
# if this shell dies without running them (SIGKILL). The normal exit
# ends it first.
services_start_watchdog() {
	local parent=$$
	(
		trap - EXIT INT TERM
		trap '' INT
		trap 'exit 0' TERM
		while kill -0 "$parent" 2>/dev/null; do
			sleep 1 &
			wait $!
		done
		services_run_exit_hooks
	) </dev/null >/dev/null 2>&1 &
	services_watchdog_pid=$!
	at_exit 'kill "$services_watchdog_pid" 2>/dev/null; wait "$services_watchdog_pid" 2>/dev/null'
}

# ensure_go puts a Go toolchain on PATH (the usual install locations).
ensure_go() {
	export PATH="$PATH:/usr/local/go/bin:${HOME:-/root}/go/bin"
	command -v go >/dev/null 2>&1 || die "go is not installed (need the version in go.mod)"
}

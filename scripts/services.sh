# shellcheck shell=bash
# Sourced by test.sh and bench.sh: makes sure PostgreSQL and MariaDB run on
# loopback with the access the live tests expect, installing them from
# Debian packages when they are missing, and exports the test DSNs.
#
#   PostgreSQL: user postgres, trust on 127.0.0.1, database "test"
#   MariaDB:    root without password on 127.0.0.1, database "test"
#
# Needs root on a Debian-like system (apt-get, pg_ctlcluster,
# start-stop-daemon). Every wait is bounded; a server that does not come up
# stops the script with a message.

SERVICE_WAIT_SECONDS=${SERVICE_WAIT_SECONDS:-60}

log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# wait_for NAME COMMAND...: run COMMAND every second until it succeeds,
# at most SERVICE_WAIT_SECONDS times.
wait_for() {
	local name=$1 i
	shift
	for ((i = 0; i < SERVICE_WAIT_SECONDS; i++)); do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		sleep 1
	done
	die "$name did not come up within ${SERVICE_WAIT_SECONDS}s (last try: $*)"
}

apt_updated=
apt_install() {
	if [[ -z $apt_updated ]]; then
		log "apt-get update"
		apt-get update -q >/dev/null || die "apt-get update failed"
		apt_updated=1
	fi
	log "apt-get install $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/dev/null ||
		die "apt-get install $* failed"
}

pg_psql() { psql -h 127.0.0.1 -U postgres -w -X -q -v ON_ERROR_STOP=1 "$@"; }

ensure_postgres() {
	if ! command -v pg_ctlcluster >/dev/null 2>&1 || [[ -z $(ls /etc/postgresql 2>/dev/null) ]]; then
		apt_install postgresql postgresql-client
	fi
	local version
	version=$(ls /etc/postgresql | sort -V | tail -n 1)
	[[ -n $version ]] || die "no PostgreSQL cluster under /etc/postgresql"
	if ! pg_isready -h 127.0.0.1 -p 5432 -q; then
		log "starting PostgreSQL $version"
		pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
		wait_for "PostgreSQL" pg_isready -h 127.0.0.1 -p 5432 -q
	fi
	if ! pg_psql -d postgres -tAc 'SELECT 1' >/dev/null 2>&1; then
		# Fresh installs ask for a password on TCP: trust loopback instead.
		local hba=/etc/postgresql/$version/main/pg_hba.conf
		log "allowing trust authentication on loopback in $hba"
		local tmp
		tmp=$(mktemp)
		{
			echo "host all all 127.0.0.1/32 trust"
			echo "host all all ::1/128 trust"
			cat "$hba"
		} >"$tmp"
		cat "$tmp" >"$hba"
		rm -f "$tmp"
		pg_ctlcluster --skip-systemctl-redirect "$version" main reload
		wait_for "PostgreSQL trust login" pg_psql -d postgres -tAc 'SELECT 1'
	fi
	if [[ $(pg_psql -d postgres -tAc "SELECT count(*) FROM pg_database WHERE datname = 'test'") != 1 ]]; then
		log "creating PostgreSQL database test"
		pg_psql -d postgres -c 'CREATE DATABASE test'
	fi
}

my_sql() { mariadb -h 127.0.0.1 -P 3306 -u root --connect-timeout=5 "$@"; }

ensure_mariadb() {
	if [[ ! -x /usr/sbin/mariadbd ]]; then
		apt_install mariadb-server mariadb-client
	fi
	if ! mariadb-admin -h127.0.0.1 -uroot --connect-timeout=5 ping >/dev/null 2>&1; then
		log "starting MariaDB"
		install -d -o mysql -g mysql /run/mysqld
		if [[ ! -d /var/lib/mysql/mysql ]]; then
			mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null || die "mariadb-install-db failed"
		fi
		start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql --bind-address=127.0.0.1 --port=3306
		wait_for "MariaDB" mariadb-admin -h127.0.0.1 -uroot --connect-timeout=5 ping
	fi
	if ! my_sql -e 'SELECT 1' >/dev/null 2>&1; then
		# Debian's root logs in by unix socket only: add password-less root
		# for 127.0.0.1 (as an IP and as "localhost" when names resolve).
		log "allowing root without password on 127.0.0.1"
		mariadb -u root <<-'SQL' || die "cannot configure MariaDB root over the socket"
			CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '';
			GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
			ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD('');
			FLUSH PRIVILEGES;
		SQL
		wait_for "MariaDB root login" my_sql -e 'SELECT 1'
	fi
	my_sql -e 'CREATE DATABASE IF NOT EXISTS test'
}

ensure_services() {
	[[ $(id -u) == 0 ]] || log "warning: not root; starting or installing servers may fail"
	ensure_postgres
	ensure_mariadb
	: "${SCHEDLOCK_TEST_POSTGRES_DSN:=postgres://postgres@127.0.0.1:5432/test?sslmode=disable}"
	: "${SCHEDLOCK_TEST_MYSQL_DSN:=root@tcp(127.0.0.1:3306)/test}"
	export SCHEDLOCK_TEST_POSTGRES_DSN SCHEDLOCK_TEST_MYSQL_DSN
	log "PostgreSQL and MariaDB are up; SCHEDLOCK_TEST_POSTGRES_DSN and SCHEDLOCK_TEST_MYSQL_DSN are set"
}

# ensure_go puts a Go toolchain on PATH (the usual install locations).
ensure_go() {
	export PATH="$PATH:/usr/local/go/bin:${HOME:-/root}/go/bin"
	command -v go >/dev/null 2>&1 || die "go is not installed (need the version in go.mod)"
}

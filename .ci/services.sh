#!/usr/bin/env bash
# Makes sure the services the store suites need are running on loopback:
# Redis on 127.0.0.1:6379 and PostgreSQL on 127.0.0.1:5432 with trust
# authentication for the user postgres and a database "test". A service
# that is not answering is started; one that is not installed is installed
# from Debian's packages first (postgresql, redis-server), so that CI on a
# fresh machine passes. Then prints the environment for the tests:
#
#   eval "$(.ci/services.sh)"
#
# Progress goes to stderr; only export lines go to stdout.
set -euo pipefail

log() { echo "services: $*" >&2; }

answers() { timeout 2 bash -c "</dev/tcp/127.0.0.1/$1" 2>/dev/null; }

# wait_for PORT NAME: up to 30 s.
wait_for() {
	for _ in $(seq 1 60); do
		answers "$1" && return 0
		sleep 0.5
	done
	log "$2 did not start on 127.0.0.1:$1"
	return 1
}

apt_install() {
	log "installing $* from Debian's packages"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || true
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

ensure_redis() {
	if answers 6379; then return 0; fi
	command -v redis-server >/dev/null || apt_install redis-server
	log "starting redis-server"
	# The command the machine's documentation gives (no persistence).
	as_root mkdir -p /var/lib/redis /var/log/redis
	as_root redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
		--dir /var/lib/redis --logfile /var/log/redis/ci.log >&2
	wait_for 6379 Redis
}

ensure_postgres() {
	if ! answers 5432; then
		command -v pg_ctlcluster >/dev/null || apt_install postgresql
		local version
		version=$(ls /etc/postgresql | sort -V | tail -n 1)
		if [ -z "$version" ]; then
			log "no PostgreSQL cluster configured after installation"
			return 1
		fi
		log "starting PostgreSQL $version"
		as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start >&2 || true
		wait_for 5432 PostgreSQL
	fi
	# A fresh installation asks for passwords on TCP and has no "test"
	# database: trust loopback, as the development machines do, and create it.
	if ! psql -h 127.0.0.1 -U postgres -d postgres -Atqc 'select 1' >/dev/null 2>&1; then
		local hba
		hba=$(ls /etc/postgresql/*/main/pg_hba.conf | sort -V | tail -n 1)
		log "trusting loopback connections in $hba"
		as_root sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\nlocal all all trust' "$hba"
		as_root pg_ctlcluster --skip-systemctl-redirect "$(basename "$(dirname "$(dirname "$hba")")")" main reload >&2
		sleep 1
	fi
	if ! psql -h 127.0.0.1 -U postgres -d test -Atqc 'select 1' >/dev/null 2>&1; then
		log "creating database test"
		psql -h 127.0.0.1 -U postgres -d postgres -qc 'create database test' >&2
	fi
}

ensure_redis
ensure_postgres
echo "export IDEMPRINT_TEST_REDIS=redis://127.0.0.1:6379/0"
echo "export IDEMPRINT_TEST_POSTGRES='postgres://postgres@127.0.0.1:5432/test?sslmode=disable'"

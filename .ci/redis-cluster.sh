#!/usr/bin/env bash
# redis-cluster.sh start|stop|addrs: a three-node Redis Cluster on loopback
# for the tests of store/redisstore.
#
#   start  starts the nodes (without persistence, daemonized), creates the
#          cluster, waits until every node reports cluster_state:ok and
#          prints the value for IDEMPRINT_TEST_REDIS_CLUSTER. A cluster that
#          is already up and ok is left as it is; a partial one is stopped
#          and made anew.
#   stop   shuts the nodes down and removes their directory.
#   addrs  prints the value for IDEMPRINT_TEST_REDIS_CLUSTER.
#
# Environment:
#   REDIS_CLUSTER_PORTS  the nodes' ports (default "7001 7002 7003")
#   REDIS_CLUSTER_DIR    their working directory (default
#                        ${TMPDIR:-/tmp}/idemprint-redis-cluster)
#
# Usage in CI:
#   export IDEMPRINT_TEST_REDIS_CLUSTER=$(bash .ci/redis-cluster.sh start)
set -euo pipefail

read -r -a ports <<<"${REDIS_CLUSTER_PORTS:-7001 7002 7003}"
dir=${REDIS_CLUSTER_DIR:-${TMPDIR:-/tmp}/idemprint-redis-cluster}
host=127.0.0.1

addrs() {
	local out=() p
	for p in "${ports[@]}"; do
		out+=("$host:$p")
	done
	(IFS=,; echo "${out[*]}")
}

cli() {
	local port=$1
	shift
	redis-cli -h "$host" -p "$port" "$@"
}

up() { [[ $(cli "$1" ping 2>/dev/null) == PONG ]]; }

state_ok() { cli "$1" cluster info 2>/dev/null | tr -d '\r' | grep -qx 'cluster_state:ok'; }

all_ok() {
	local p
	for p in "${ports[@]}"; do
		up "$p" && state_ok "$p" || return 1
	done
}

stop() {
	local p
	for p in "${ports[@]}"; do
		if up "$p"; then
			cli "$p" shutdown nosave >/dev/null 2>&1 || true
		fi
	done
	for p in "${ports[@]}"; do
		for _ in $(seq 50); do
			up "$p" || break
			sleep 0.1
		done
		if up "$p"; then
			echo "redis-cluster: the node on port $p did not stop" >&2
			exit 1
		fi
	done
	rm -rf "$dir"
}

start() {
	command -v redis-server >/dev/null && command -v redis-cli >/dev/null || {
		echo "redis-cluster: redis-server and redis-cli are needed (Debian package redis-server)" >&2
		exit 2
	}
	if all_ok; then
		addrs
		return
	fi
	stop # nothing, or a partial cluster: start anew
	mkdir -p "$dir"
	local p
	for p in "${ports[@]}"; do
		mkdir -p "$dir/$p"
		redis-server --port "$p" --bind "$host" --cluster-enabled yes \
			--cluster-config-file "$dir/$p/nodes.conf" --cluster-node-timeout 5000 \
			--save "" --appendonly no --dir "$dir/$p" --logfile "$dir/$p/redis.log" \
			--pidfile "$dir/$p/redis.pid" --daemonize yes
	done
	for p in "${ports[@]}"; do
		for _ in $(seq 100); do
			up "$p" && break
			sleep 0.1
		done
		up "$p" || {
			echo "redis-cluster: the node on port $p did not start; see $dir/$p/redis.log" >&2
			exit 1
		}
	done
	local nodes=()
	for p in "${ports[@]}"; do
		nodes+=("$host:$p")
	done
	redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$dir/create.log" 2>&1 || {
		cat "$dir/create.log" >&2
		exit 1
	}
	for _ in $(seq 300); do
		if all_ok; then
			addrs
			return
		fi
		sleep 0.1
	done
	echo "redis-cluster: cluster_state is not ok after 30s" >&2
	exit 1
}

case ${1:-} in
start) start ;;
stop) stop ;;
addrs) addrs ;;
*)
	echo "usage: $0 start|stop|addrs" >&2
	exit 2
	;;
esac

# hosts.sh - simulated hosts for the stress scripts (sourced by run.sh and
# scale.sh): HOSTS network namespaces, each joined to this one by a veth
# pair on NET.N.0/24 (the host is NET.N.2, the server side NET.N.1), so that
# workers reach the servers over a network, as on a cluster. Without root
# (or `ip netns`), the hosts are local process groups.
# Needs: HOSTS, TAG (unique per run), NET (e.g. 10.77), log().
# Sets NETNS (1 with namespaces) and DJC_LISTEN_EXTRA (the addresses the
# servers must listen on); hosts_down undoes it (from the caller's cleanup).
NETNS=0

ns() { echo "${TAG}h$1"; }
veth() { echo "${TAG}v$1"; }

# host_ip N: the address of the server as host N reaches it
host_ip() { echo "$NET.$1.1"; }

net_up() {
	[ "$(id -u)" = 0 ] && command -v ip >/dev/null || return 1
	local h
	for h in $(seq 1 $HOSTS); do
		ip netns add "$(ns $h)" || return 1
		ip link add "$(veth $h)a" type veth peer name "$(veth $h)b" || return 1
		ip link set "$(veth $h)b" netns "$(ns $h)" || return 1
		ip addr add "$NET.$h.1/24" dev "$(veth $h)a" || return 1
		ip link set "$(veth $h)a" up || return 1
		ip netns exec "$(ns $h)" ip addr add "$NET.$h.2/24" dev "$(veth $h)b" || return 1
		ip netns exec "$(ns $h)" ip link set "$(veth $h)b" up || return 1
		ip netns exec "$(ns $h)" ip link set lo up || return 1
	done
	return 0
}

hosts_down() {
	[ "$NETNS" = 1 ] || return 0
	local h
	for h in $(seq 1 $HOSTS); do
		ip link del "$(veth $h)a" 2>/dev/null
		ip netns del "$(ns $h)" 2>/dev/null
	done
}

hosts_up() {
	if net_up; then
		NETNS=1
		export DJC_LISTEN_EXTRA="$(for h in $(seq 1 $HOSTS); do printf '%s ' "$(host_ip $h)"; done)"
		log "simulated hosts: $HOSTS network namespaces on veth pairs ($NET.N.2 -> $NET.N.1)"
	else
		NETNS=1 hosts_down
		NETNS=0
		log "not root (or no ip netns): simulated hosts are local process groups"
	fi
}

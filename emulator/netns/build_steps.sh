# Sourced by build_router_image.sh and build_guest_image.sh (both set $work first): steps with
# their logs, and the chroot's mounts always undone.

mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2> /dev/null || true; done
}
trap cleanup EXIT

# Runs a step with its output in WORK_DIR/NAME.log; on failure shows the log's end.
step() {
  local name=$1
  shift
  echo "stage $name"
  if ! "$@" > "$work/$name.log" 2>&1; then
    echo "$name failed (log: $work/$name.log):" >&2
    tail -n 5 "$work/$name.log" >&2
    exit 1
  fi
}

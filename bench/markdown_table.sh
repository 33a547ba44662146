# Sourced by the bench scripts whose figures are a README table (bench/results/*.md, which
# scripts/readme_tables.sh copies into the README): their one way to take `--markdown FILE` and to
# write the table.

# markdown_option ARGS...: $markdown is FILE when ARGS begin with `--markdown FILE`, else empty, and
# $markdown_args how many of ARGS that took (0 or 2), for the caller to shift.
markdown_option() {
  markdown= markdown_args=0
  [[ ${1:-} == --markdown ]] || return 0
  [[ -n ${2:-} ]] || { echo "--markdown needs a FILE" >&2; exit 2; }
  markdown=$2 markdown_args=2
}

# write_markdown_table HEADER ALIGNMENT ROWS: the table (its header line, its alignment line and the
# rows in the file ROWS) into $markdown, when --markdown asked for it.
write_markdown_table() {
  [[ -n $markdown ]] || return 0
  { echo "$1"; echo "$2"; cat "$3"; } > "$markdown"
  echo "wrote $markdown"
}

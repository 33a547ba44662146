#!/usr/bin/env bash
# Usage: check_references.sh ROOT [--exclude PATH]...
# Every reference in ROOT's files can be followed from a clone of the repository (BIBLIOGRAPHY.md,
# "How to cite"). Fails (exit 1) naming file:line for
#   - a reference a clone cannot follow: a path into a folder kept outside the repository, a numbered
#     source text instead of its bibliography key, a private tracker's issue or defect number
#     (a GitHub issue is written owner/repo#N);
#   - a citation key [key] that ROOT/BIBLIOGRAPHY.md does not define. A key is two lowercase letters,
#     then lowercase letters, digits and hyphens, containing a hyphen or four consecutive digits, in
#     brackets not followed by "(" (that is a Markdown link). Keys are defined by lines "- **[key]**".
# The files: `git ls-files` when ROOT is the top of a git checkout, else every file under ROOT but
# build*, node_modules and .git folders; binary files are skipped, and so is each PATH (relative to
# ROOT) given with --exclude.
set -euo pipefail
root=${1:?usage: check_references.sh ROOT [--exclude PATH]...}
shift
excludes=()
while (($#)); do
  case $1 in
    --exclude) excludes+=("${2:?--exclude needs a path}"); shift 2 ;;
    *) echo "check_references: unknown argument $1" >&2; exit 2 ;;
  esac
done
cd "$root"
bibliography=BIBLIOGRAPHY.md
if [[ ! -f $bibliography ]]; then
  echo "check_references: no $bibliography in $root" >&2
  exit 2
fi

list_files() {
  local top
  top=$(git rev-parse --show-toplevel 2> /dev/null || true)
  if [[ -n $top && $(cd "$top" && pwd -P) == $(pwd -P) ]]; then
    git ls-files -z
  else
    find . \( -name 'build*' -o -name node_modules -o -name .git \) -prune -o -type f -print0 | sed -z 's|^\./||'
  fi
}
files=()
while IFS= read -r -d '' f; do
  [[ -f $f ]] || continue  # listed by git but removed from the work tree
  case $f in node_modules/* | */node_modules/* | build*/*) continue ;; esac
  skip=0
  for x in "${excludes[@]+"${excludes[@]}"}"; do
    x=${x%/}
    if [[ $f == "$x" || $f == "$x"/* ]]; then skip=1; fi
  done
  ((skip)) || files+=("$f")
done < <(list_files)
if ((${#files[@]} == 0)); then
  echo "check_references: no files to check under $root" >&2
  exit 2
fi

status=0
# References a clone cannot follow. The patterns are written so that this file does not match them.
forbidden='(^|[^A-Za-z0-9_.-])shared[/]|\bseeds? 0[0-9][0-9]\b|\b[0-9]{3}_[0-9a-f]{16}[.]txt\b|\b(issue|defect)s? #?[0-9]'
hits=$(printf '%s\0' "${files[@]}" | xargs -0 grep -nIiE -- "$forbidden" 2> /dev/null || true)
if [[ -n $hits ]]; then
  echo "references a clone of the repository cannot follow (cite a key of $bibliography; describe a problem instead of numbering it):"
  while IFS= read -r hit; do echo "  ${hit:0:200}"; done <<< "$hits"
  status=1
fi

# Citation keys: each must be defined in the bibliography.
defined=$(grep -oE '^- \*\*\[[a-z][a-z0-9-]*\]\*\*' "$bibliography" | sed -E 's/^- \*\*\[([^]]*)\]\*\*$/\1/' | sort -u)
unknown=$(printf '%s\0' "${files[@]}" | xargs -0 grep -noIE -- '\[[a-z]{2}[a-z0-9-]*[a-z0-9]\]\(?' 2> /dev/null |
  DEFINED=$defined awk -F: '
    BEGIN { n = split(ENVIRON["DEFINED"], keys, "\n"); for (i = 1; i <= n; i++) known[keys[i]] = 1 }
    {
      token = $NF
      if (token ~ /\($/) next                        # a Markdown link [text](url)
      key = substr(token, 2, length(token) - 2)
      if (key !~ /-/ && key !~ /[0-9][0-9][0-9][0-9]/) next  # not a key shape: array indexing and the like
      if (!(key in known)) print $1 ":" $2 ": [" key "]"
    }' || true)
if [[ -n $unknown ]]; then
  echo "citation keys that $bibliography does not define:"
  while IFS= read -r hit; do echo "  $hit"; done <<< "$unknown"
  status=1
fi
if ((status == 0)); then
  echo "references hold: ${#files[@]} files, $(wc -l <<< "$defined") keys defined"
fi
exit $status

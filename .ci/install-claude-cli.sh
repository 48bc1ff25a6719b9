#!/usr/bin/env bash
# Install the real Claude Code CLI at a pinned version into a project-local, git-ignored folder.
# Idempotent: returns immediately when the pinned version is already installed.
# Usage: .ci/install-claude-cli.sh [version]      (prints the binary path on stdout)
# Tests find the binary at .cache/claude-cli/<version>/node_modules/.bin/claude, or via
# SKILLEVAL_CLAUDE_BIN.
set -euo pipefail

VERSION="${1:-${SKILLEVAL_CLAUDE_CLI_VERSION:-2.1.332}}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="$ROOT/.cache/claude-cli/$VERSION"
BIN="$PREFIX/node_modules/.bin/claude"

if [[ -x "$BIN" ]] && [[ -f "$PREFIX/.installed" ]]; then
  echo "$BIN"
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "install-claude-cli: npm not found; install Node.js >= 18 to run the real-CLI tests" >&2
  exit 1
fi
mkdir -p "$PREFIX"
# Parallel test workers may all ask at once: one installs, the others wait and reuse it.
exec 9>"$PREFIX.lock"
flock 9
if [[ -x "$BIN" ]] && [[ -f "$PREFIX/.installed" ]]; then
  echo "$BIN"
  exit 0
fi
# A private package.json keeps npm from walking up into the project.
[[ -f "$PREFIX/package.json" ]] || echo '{"name":"skilleval-claude-cli","private":true}' > "$PREFIX/package.json"
npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error \
  "@anthropic-ai/claude-code@$VERSION" >&2
if ! "$BIN" --version >/dev/null 2>&1; then
  echo "install-claude-cli: $BIN --version failed" >&2
  exit 1
fi
touch "$PREFIX/.installed"
echo "$BIN"

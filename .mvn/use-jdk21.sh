# Sourced by .ci/run and local/run: exports JAVA_HOME as a JDK 21+ (JAVA_HOME itself, the default
# java, or the first under /usr/lib/jvm), since a machine's default java may be older.
java_major() {
    "$1/bin/java" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}'
}

if [ -z "${JAVA_HOME:-}" ] || ! [ "$(java_major "$JAVA_HOME")" -ge 21 ] 2>/dev/null; then
    JAVA_HOME=""
    for candidate in "$(dirname "$(dirname "$(readlink -f "$(command -v java || echo /nonexistent)")")")" /usr/lib/jvm/*; do
        if [ -x "$candidate/bin/javac" ] && [ "$(java_major "$candidate")" -ge 21 ] 2>/dev/null; then
            JAVA_HOME="$candidate"
            break
        fi
    done
    if [ -z "$JAVA_HOME" ]; then
        echo "no JDK 21+ found: install one or set JAVA_HOME" >&2
        exit 1
    fi
fi
export JAVA_HOME

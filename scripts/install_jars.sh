#!/usr/bin/env bash
# Fetches the Java oracles' jars by Maven coordinates into .jars/ (git-ignored; idempotent):
#   .jars/paimon-2.0.0/  Apache Paimon 2.0.0's Java core. The registry serves no paimon-bundle
#                        2.0.0; paimon-flink-2.0 2.0.0 is the same core shaded together with the
#                        Flink connector (whose Flink classes stay unloaded unless Flink runs it).
#   .jars/paimon-1.4.2/  paimon-bundle 1.4.2, the last 1.x.
#   .jars/lib/           what both need beside them: Hadoop's client, Jackson (the oracle's JSON),
#                        SLF4J, the SQLite and PostgreSQL JDBC drivers (Paimon's JDBC catalog and lock).
# then compiles the oracle program (tests/oracle/java) once per Paimon version.
set -euo pipefail
cd "$(dirname "$0")/.."
JARS="$PWD/.jars"
PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:2.8
# Maven's local repository for these downloads (some parent POMs are not served, so each jar is
# fetched alone, without its dependency descriptors, and copied out of this repository)
REPO="$JARS/m2"
fetch() {  # group:artifact:version destination-folder
    local coords=$1 dest=$2 group artifact version name
    IFS=: read -r group artifact version <<<"$coords"
    name="$artifact-$version.jar"
    [ -s "$dest/$name" ] && return 0
    mkdir -p "$dest"
    mvn -q -B -Dmaven.repo.local="$REPO" "$PLUGIN:get" -Dartifact="$coords" -Dtransitive=false >/dev/null \
        || { echo "install_jars: could not fetch $coords" >&2; return 1; }
    cp "$REPO/${group//.//}/$artifact/$version/$name" "$dest/$name"
}
fetch org.apache.paimon:paimon-flink-2.0:2.0.0 "$JARS/paimon-2.0.0"
fetch org.apache.paimon:paimon-bundle:1.4.2 "$JARS/paimon-1.4.2"
for coords in \
    org.apache.hadoop:hadoop-client-api:3.4.1 \
    org.apache.hadoop:hadoop-client-runtime:3.4.1 \
    org.xerial.snappy:snappy-java:1.1.10.7 \
    com.fasterxml.jackson.core:jackson-databind:2.18.2 \
    com.fasterxml.jackson.core:jackson-core:2.18.2 \
    com.fasterxml.jackson.core:jackson-annotations:2.18.2 \
    org.slf4j:slf4j-api:2.0.16 \
    org.xerial:sqlite-jdbc:3.50.3.0 \
    org.postgresql:postgresql:42.7.14 \
    org.slf4j:slf4j-nop:2.0.16; do
    fetch "$coords" "$JARS/lib"
done
# the oracle program, compiled against each version's jar (their APIs differ in places)
if compgen -G "tests/oracle/java/*.java" >/dev/null; then
    for version in 2.0.0 1.4.2; do
        out="$JARS/oracle-$version"
        stamp="$out/.sources"
        sources=$(cat tests/oracle/java/*.java | sha1sum | cut -d' ' -f1)
        if [ "$(cat "$stamp" 2>/dev/null)" != "$sources" ]; then
            rm -rf "$out" && mkdir -p "$out"
            javac -nowarn -encoding UTF-8 -d "$out" -cp "$JARS/paimon-$version/*:$JARS/lib/*" tests/oracle/java/*.java
            echo "$sources" >"$stamp"
        fi
    done
fi

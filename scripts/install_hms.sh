#!/usr/bin/env bash
# A standalone Hive Metastore for the Hive catalog tests (tests/hms.py), fetched by Maven
# coordinates into .jars/hms/ (git-ignored; idempotent, a no-op once done):
#   .jars/hms/lib/       hive-standalone-metastore-server 4.0.1 with Hadoop 3.3.6 (hadoop-hdfs
#                        included: the metastore's Warehouse needs it), Derby and the PostgreSQL
#                        JDBC driver (the suite backs the metastore with its PostgreSQL server)
#   .jars/hms/scripts/   the schema scripts (Derby, PostgreSQL), which ship only in the -bin archive
# and the Python client (thrift + the hive_metastore bindings) into .venv: the 'hive' extra.
set -euo pipefail
cd "$(dirname "$0")/.."
HMS="$PWD/.jars/hms"
REPO="$PWD/.jars/m2"
VERSION=4.0.1
HADOOP=3.3.6
if ! .venv/bin/python -c "import thrift, hive_metastore" >/dev/null 2>&1; then
    .venv/bin/pip install -q -e ".[hive]"
fi
[ -f "$HMS/.done-$VERSION" ] && exit 0
if ! command -v mvn >/dev/null 2>&1; then
    echo "install_hms: Maven is not installed; the Hive catalog tests will skip (apt-get install maven)" >&2
    exit 0
fi
rm -rf "$HMS" && mkdir -p "$HMS"
cat >"$HMS/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>lakestore</groupId><artifactId>hms</artifactId><version>0</version><packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.hive</groupId><artifactId>hive-standalone-metastore-server</artifactId><version>$VERSION</version></dependency>
    <dependency><groupId>org.apache.hadoop</groupId><artifactId>hadoop-common</artifactId><version>$HADOOP</version></dependency>
    <dependency><groupId>org.apache.hadoop</groupId><artifactId>hadoop-hdfs</artifactId><version>$HADOOP</version></dependency>
    <dependency><groupId>org.apache.hadoop</groupId><artifactId>hadoop-mapreduce-client-core</artifactId><version>$HADOOP</version></dependency>
    <dependency><groupId>org.apache.derby</groupId><artifactId>derby</artifactId><version>10.14.2.0</version></dependency>
    <dependency><groupId>org.postgresql</groupId><artifactId>postgresql</artifactId><version>42.7.4</version></dependency>
  </dependencies>
</project>
POM
(cd "$HMS" && mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$REPO" dependency:copy-dependencies -DoutputDirectory=lib -DincludeScope=runtime >mvn.log 2>&1) \
    || { tail -20 "$HMS/mvn.log" >&2; echo "install_hms: could not fetch the metastore's jars" >&2; exit 1; }
rm -f "$HMS"/lib/slf4j-log4j12-*.jar "$HMS"/lib/slf4j-reload4j-*.jar  # one SLF4J binding: log4j2's
(cd "$HMS" && mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$REPO" dependency:copy \
    -Dartifact="org.apache.hive:hive-standalone-metastore-server:$VERSION:tar.gz:bin" -DoutputDirectory=. >mvn.log 2>&1) \
    || { tail -20 "$HMS/mvn.log" >&2; echo "install_hms: could not fetch the metastore's schema scripts" >&2; exit 1; }
tar xzf "$HMS/hive-standalone-metastore-server-$VERSION-bin.tar.gz" -C "$HMS" --strip-components=1 \
    --wildcards '*/scripts/metastore/upgrade/derby/*' '*/scripts/metastore/upgrade/postgres/*'
rm -f "$HMS/hive-standalone-metastore-server-$VERSION-bin.tar.gz"
touch "$HMS/.done-$VERSION"

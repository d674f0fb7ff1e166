/*
 * Apache Paimon's Java core (2.0.0, 1.4.2) as a test oracle, served over stdin/stdout.
 *
 * Compiled against each version's jar by scripts/install_jars.sh and started by
 * tests/oracle/java_driver.py. One JVM serves a whole test session: each request is one JSON
 * line on stdin ({"op": ..., ...}); each response is one line on stdout starting with
 * "@@java-oracle@@ " ({"ok": true, ...} or {"ok": false, "error", "traceback"}). Everything else
 * (Paimon's own printing) goes to stderr.
 *
 * Values cross as JSON, directed by the Paimon type of the column:
 *   BOOLEAN, TINYINT..BIGINT, FLOAT, DOUBLE  JSON booleans and numbers ("NaN", "Infinity",
 *                                            "-Infinity" as strings)
 *   CHAR, VARCHAR                            strings
 *   BINARY, VARBINARY                        base64 strings
 *   DECIMAL                                  strings (plain notation)
 *   DATE                                     epoch days; TIME: milliseconds of the day
 *   TIMESTAMP, TIMESTAMP_LTZ                 epoch microseconds; epoch nanoseconds when the
 *                                            precision is above 6
 *   ARRAY                                    lists; MAP: lists of [key, value] pairs;
 *                                            MULTISET: lists of [element, count] pairs;
 *                                            ROW: lists of the field values in order
 * Types cross as Paimon's schema-file JSON: a string for an atomic type ("BIGINT NOT NULL"),
 * an object for ARRAY/MAP/MULTISET/ROW ({"type": "ARRAY", "element": ...}). Reads answer with
 * each field's name, type (Paimon's SQL string, e.g. "ROW<`a` INT, `b` STRING>") and
 * nullability, then the rows.
 *
 * Uses only Paimon's public Java API (Catalog, Table, BatchWriteBuilder, StreamWriteBuilder,
 * ReadBuilder, SnapshotManager, ExpireConfig, SchemaChange), identical in 1.4.2 and 2.0.0 for
 * what is used here.
 */

import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.paimon.CoreOptions;
import org.apache.paimon.Snapshot;
import org.apache.paimon.append.AppendCompactCoordinator;
import org.apache.paimon.append.AppendCompactTask;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.GenericArray;
import org.apache.paimon.data.GenericMap;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalArray;
import org.apache.paimon.data.InternalMap;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.deletionvectors.BitmapDeletionVector;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.fileindex.FileIndexReader;
import org.apache.paimon.fileindex.FileIndexResult;
import org.apache.paimon.fileindex.FileIndexWriter;
import org.apache.paimon.fileindex.FileIndexer;
import org.apache.paimon.fileindex.bitmap.BitmapIndexResult;
import org.apache.paimon.fs.ByteArraySeekableStream;
import org.apache.paimon.predicate.FieldRef;
import org.apache.paimon.index.BucketAssigner;
import org.apache.paimon.index.HashBucketAssigner;
import org.apache.paimon.index.SimpleHashBucketAssigner;
import org.apache.paimon.options.ConfigOption;
import org.apache.paimon.options.ExpireConfig;
import org.apache.paimon.options.FallbackKey;
import org.apache.paimon.operation.BaseAppendFileStoreWrite;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.schema.SchemaChange;
import org.apache.paimon.table.BucketMode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.RowPartitionKeyExtractor;
import org.apache.paimon.table.sink.StreamTableCommit;
import org.apache.paimon.table.sink.StreamTableWrite;
import org.apache.paimon.table.sink.StreamWriteBuilder;
import org.apache.paimon.table.sink.TableCommitImpl;
import org.apache.paimon.table.sink.TableWrite;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.ArrayType;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypeJsonParser;
import org.apache.paimon.types.LocalZonedTimestampType;
import org.apache.paimon.types.MapType;
import org.apache.paimon.types.MultisetType;
import org.apache.paimon.types.RowType;
import org.apache.paimon.types.TimestampType;
import org.apache.paimon.utils.SnapshotManager;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

public class PaimonOracle {

    static final String PREFIX = "@@java-oracle@@ ";
    static final ObjectMapper JSON =
            JsonMapper.builder().enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS).build();
    static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    static final Map<String, Catalog> CATALOGS = new HashMap<>();
    // catalog options per warehouse (op "use_catalog"), e.g. metastore=jdbc with its uri
    static final Map<String, Map<String, String>> CATALOG_OPTIONS = new HashMap<>();

    public static void main(String[] args) throws Exception {
        PrintStream out =
                new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        System.setOut(System.err); // only protocol lines on stdout
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        ObjectNode ready = NODES.objectNode();
        ready.put("ready", true);
        out.println(PREFIX + JSON.writeValueAsString(ready));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            ObjectNode result;
            try {
                JsonNode req = JSON.readTree(line);
                result = dispatch(req.get("op").asText(), req);
                result.put("ok", true);
            } catch (Throwable t) {
                result = NODES.objectNode();
                result.put("ok", false);
                Throwable root = t;
                while (root.getCause() != null && root.getCause() != root) {
                    root = root.getCause();
                }
                result.put("error", t + (root != t ? " (caused by " + root + ")" : ""));
                StringWriter trace = new StringWriter();
                t.printStackTrace(new PrintWriter(trace));
                String text = trace.toString();
                result.put("traceback", text.length() > 8000 ? text.substring(0, 8000) : text);
            }
            out.println(PREFIX + JSON.writeValueAsString(result));
        }
        for (Catalog catalog : CATALOGS.values()) {
            catalog.close();
        }
    }

    static ObjectNode dispatch(String op, JsonNode req) throws Exception {
        switch (op) {
            case "create_table":
                return createTable(req);
            case "write":
                return write(req);
            case "compact":
                return compact(req);
            case "read":
                return read(req);
            case "snapshots":
                return snapshots(req);
            case "snapshot_json":
                return snapshotJson(req);
            case "create_tag":
                return createTag(req);
            case "delete_tag":
                fileTable(req).deleteTag(req.get("tag").asText());
                return NODES.objectNode();
            case "rollback":
                return rollback(req);
            case "expire":
                return expire(req);
            case "alter":
                return alter(req);
            case "create_branch":
                return createBranch(req);
            case "option_keys":
                return optionKeys();
            case "dv_bitmaps":
                return dvBitmaps(req);
            case "file_index":
                return fileIndex(req);
            case "analyze":
                return analyze(req);
            case "use_catalog":
                return useCatalog(req);
            case "catalog":
                return catalogOp(req);
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    // -- catalog and tables -----------------------------------------------------------------

    static Catalog catalog(String warehouse) {
        return CATALOGS.computeIfAbsent(
                warehouse,
                w -> {
                    Map<String, String> options = new HashMap<>();
                    options.put("warehouse", w);
                    // no table cache: the other engine changes tables between requests
                    options.put("cache-enabled", "false");
                    options.putAll(CATALOG_OPTIONS.getOrDefault(w, Collections.emptyMap()));
                    return CatalogFactory.createCatalog(
                            CatalogContext.create(Options.fromMap(options)));
                });
    }

    /** Later requests on this warehouse open their catalog with these options. */
    static ObjectNode useCatalog(JsonNode req) throws Exception {
        String warehouse = req.get("warehouse").asText();
        Catalog open = CATALOGS.remove(warehouse);
        if (open != null) {
            open.close();
        }
        CATALOG_OPTIONS.put(warehouse, stringMap(req.get("catalog_options")));
        return NODES.objectNode();
    }

    /** Catalog-level operations: list, create and drop databases; list, drop and rename tables. */
    static ObjectNode catalogOp(JsonNode req) throws Exception {
        Catalog catalog = catalog(req.get("warehouse").asText());
        ObjectNode result = NODES.objectNode();
        ArrayNode names = result.putArray("names");
        switch (req.get("action").asText()) {
            case "list_databases":
                catalog.listDatabases().forEach(names::add);
                break;
            case "list_tables":
                catalog.listTables(req.get("database").asText()).forEach(names::add);
                break;
            case "create_database":
                catalog.createDatabase(
                        req.get("database").asText(), false, stringMap(req.get("properties")));
                break;
            case "drop_database":
                catalog.dropDatabase(req.get("database").asText(), false, true);
                break;
            case "drop_table":
                catalog.dropTable(identifier(req), false);
                break;
            case "rename_table":
                catalog.renameTable(
                        identifier(req), Identifier.fromString(req.get("target").asText()), false);
                break;
            default:
                throw new IllegalArgumentException("unknown catalog action " + req.get("action"));
        }
        return result;
    }

    static Identifier identifier(JsonNode req) {
        return Identifier.fromString(req.get("identifier").asText());
    }

    static Table table(JsonNode req) throws Exception {
        Table table = catalog(req.get("warehouse").asText()).getTable(identifier(req));
        Map<String, String> options = stringMap(req.get("options"));
        return options.isEmpty() ? table : table.copy(options);
    }

    static FileStoreTable fileTable(JsonNode req) throws Exception {
        return (FileStoreTable) table(req);
    }

    static Map<String, String> stringMap(JsonNode node) {
        Map<String, String> out = new LinkedHashMap<>();
        if (node != null && node.isObject()) {
            node.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
        }
        return out;
    }

    static List<String> stringList(JsonNode node) {
        List<String> out = new ArrayList<>();
        if (node != null && node.isArray()) {
            node.forEach(n -> out.add(n.asText()));
        }
        return out;
    }

    static boolean present(JsonNode req, String name) {
        return req.hasNonNull(name);
    }

    static Long latestSnapshotId(FileStoreTable table) {
        return table.snapshotManager().latestSnapshotId();
    }

    static IOManager ioManager() throws Exception {
        return IOManager.create(Files.createTempDirectory("paimon-oracle-io").toString());
    }

    // -- types ------------------------------------------------------------------------------

    /** A type in Paimon's schema-file JSON: a SQL string when atomic, an object when nested. */
    static DataType parseType(JsonNode node) {
        if (node.isTextual()) {
            return DataTypeJsonParser.parseAtomicTypeSQLString(node.asText());
        }
        String root = node.get("type").asText();
        boolean nullable = !root.contains("NOT NULL");
        if (root.startsWith("ARRAY")) {
            return new ArrayType(nullable, parseType(node.get("element")));
        } else if (root.startsWith("MULTISET")) {
            return new MultisetType(nullable, parseType(node.get("element")));
        } else if (root.startsWith("MAP")) {
            return new MapType(nullable, parseType(node.get("key")), parseType(node.get("value")));
        } else if (root.startsWith("ROW")) {
            List<DataField> fields = new ArrayList<>();
            int id = 0;
            for (JsonNode field : node.get("fields")) {
                fields.add(
                        new DataField(
                                id++, field.get("name").asText(), parseType(field.get("type"))));
            }
            return new RowType(nullable, fields);
        }
        throw new IllegalArgumentException("cannot parse type " + node);
    }

    static int timestampPrecision(DataType type) {
        if (type instanceof TimestampType) {
            return ((TimestampType) type).getPrecision();
        }
        return ((LocalZonedTimestampType) type).getPrecision();
    }

    // -- values: JSON -> Paimon's internal data ---------------------------------------------

    static double number(JsonNode node) {
        if (node.isTextual()) {
            return Double.parseDouble(node.asText()); // NaN, Infinity, -Infinity
        }
        return node.asDouble();
    }

    static Object toInternal(JsonNode node, DataType type) {
        if (node == null || node.isNull()) {
            return null;
        }
        switch (type.getTypeRoot()) {
            case BOOLEAN:
                return node.asBoolean();
            case TINYINT:
                return (byte) node.asInt();
            case SMALLINT:
                return (short) node.asInt();
            case INTEGER:
            case DATE:
            case TIME_WITHOUT_TIME_ZONE:
                return node.asInt();
            case BIGINT:
                return node.asLong();
            case FLOAT:
                return (float) number(node);
            case DOUBLE:
                return number(node);
            case CHAR:
            case VARCHAR:
                return BinaryString.fromString(node.asText());
            case BINARY:
            case VARBINARY:
                return Base64.getDecoder().decode(node.asText());
            case DECIMAL:
                {
                    org.apache.paimon.types.DecimalType decimal =
                            (org.apache.paimon.types.DecimalType) type;
                    return Decimal.fromBigDecimal(
                            new BigDecimal(node.asText()),
                            decimal.getPrecision(),
                            decimal.getScale());
                }
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                {
                    long value = node.asLong();
                    if (timestampPrecision(type) > 6) {
                        return Timestamp.fromEpochMillis(
                                Math.floorDiv(value, 1_000_000L),
                                (int) Math.floorMod(value, 1_000_000L));
                    }
                    return Timestamp.fromEpochMillis(
                            Math.floorDiv(value, 1_000L), (int) Math.floorMod(value, 1_000L) * 1000);
                }
            case ARRAY:
                {
                    DataType element = ((ArrayType) type).getElementType();
                    Object[] values = new Object[node.size()];
                    for (int i = 0; i < values.length; i++) {
                        values[i] = toInternal(node.get(i), element);
                    }
                    return new GenericArray(values);
                }
            case MULTISET:
            case MAP:
                {
                    DataType keyType;
                    DataType valueType;
                    if (type instanceof MapType) {
                        keyType = ((MapType) type).getKeyType();
                        valueType = ((MapType) type).getValueType();
                    } else {
                        keyType = ((MultisetType) type).getElementType();
                        valueType = new org.apache.paimon.types.IntType(false);
                    }
                    Map<Object, Object> values = new LinkedHashMap<>();
                    for (JsonNode pair : node) {
                        values.put(
                                toInternal(pair.get(0), keyType),
                                toInternal(pair.get(1), valueType));
                    }
                    return new GenericMap(values);
                }
            case ROW:
                return toRow(node, (RowType) type);
            default:
                throw new IllegalArgumentException("the oracle does not write " + type);
        }
    }

    static GenericRow toRow(JsonNode values, RowType type) {
        List<DataField> fields = type.getFields();
        GenericRow row = new GenericRow(fields.size());
        for (int i = 0; i < fields.size(); i++) {
            row.setField(i, toInternal(values.get(i), fields.get(i).type()));
        }
        return row;
    }

    // -- values: Paimon's internal data -> JSON ---------------------------------------------

    static JsonNode floating(double value) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            return NODES.textNode(Double.toString(value));
        }
        return NODES.numberNode(value);
    }

    static JsonNode toJson(Object value, DataType type) {
        if (value == null) {
            return NODES.nullNode();
        }
        switch (type.getTypeRoot()) {
            case BOOLEAN:
                return NODES.booleanNode((Boolean) value);
            case TINYINT:
                return NODES.numberNode((Byte) value);
            case SMALLINT:
                return NODES.numberNode((Short) value);
            case INTEGER:
            case DATE:
            case TIME_WITHOUT_TIME_ZONE:
                return NODES.numberNode((Integer) value);
            case BIGINT:
                return NODES.numberNode((Long) value);
            case FLOAT:
                {
                    float f = (Float) value;
                    if (Float.isNaN(f) || Float.isInfinite(f)) {
                        return NODES.textNode(Float.toString(f));
                    }
                    // the shortest decimal that reads back as this float
                    return NODES.numberNode(new BigDecimal(Float.toString(f)));
                }
            case DOUBLE:
                return floating((Double) value);
            case CHAR:
            case VARCHAR:
                return NODES.textNode(value.toString());
            case BINARY:
            case VARBINARY:
                return NODES.textNode(Base64.getEncoder().encodeToString((byte[]) value));
            case DECIMAL:
                return NODES.textNode(((Decimal) value).toBigDecimal().toPlainString());
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                {
                    Timestamp ts = (Timestamp) value;
                    if (timestampPrecision(type) > 6) {
                        return NODES.numberNode(
                                ts.getMillisecond() * 1_000_000L + ts.getNanoOfMillisecond());
                    }
                    return NODES.numberNode(
                            ts.getMillisecond() * 1_000L + ts.getNanoOfMillisecond() / 1000);
                }
            case ARRAY:
                {
                    DataType element = ((ArrayType) type).getElementType();
                    return arrayToJson((InternalArray) value, element);
                }
            case MULTISET:
            case MAP:
                {
                    DataType keyType;
                    DataType valueType;
                    if (type instanceof MapType) {
                        keyType = ((MapType) type).getKeyType();
                        valueType = ((MapType) type).getValueType();
                    } else {
                        keyType = ((MultisetType) type).getElementType();
                        valueType = new org.apache.paimon.types.IntType(false);
                    }
                    InternalMap map = (InternalMap) value;
                    ArrayNode keys = arrayToJson(map.keyArray(), keyType);
                    ArrayNode values = arrayToJson(map.valueArray(), valueType);
                    ArrayNode out = NODES.arrayNode();
                    for (int i = 0; i < keys.size(); i++) {
                        ArrayNode pair = NODES.arrayNode();
                        pair.add(keys.get(i));
                        pair.add(values.get(i));
                        out.add(pair);
                    }
                    return out;
                }
            case ROW:
                return rowToJson((InternalRow) value, (RowType) type);
            default:
                return NODES.textNode(value.toString());
        }
    }

    static ArrayNode arrayToJson(InternalArray array, DataType element) {
        InternalArray.ElementGetter getter = InternalArray.createElementGetter(element);
        ArrayNode out = NODES.arrayNode();
        for (int i = 0; i < array.size(); i++) {
            out.add(toJson(getter.getElementOrNull(array, i), element));
        }
        return out;
    }

    static ArrayNode rowToJson(InternalRow row, RowType type) {
        List<DataField> fields = type.getFields();
        ArrayNode out = NODES.arrayNode();
        for (int i = 0; i < fields.size(); i++) {
            DataType fieldType = fields.get(i).type();
            out.add(toJson(InternalRow.createFieldGetter(fieldType, i).getFieldOrNull(row), fieldType));
        }
        return out;
    }

    static ArrayNode fieldsJson(RowType type) {
        ArrayNode out = NODES.arrayNode();
        for (DataField field : type.getFields()) {
            ObjectNode f = NODES.objectNode();
            f.put("name", field.name());
            f.put("type", field.type().asSQLString());
            f.put("nullable", field.type().isNullable());
            out.add(f);
        }
        return out;
    }

    // -- operations -------------------------------------------------------------------------

    static ObjectNode createTable(JsonNode req) throws Exception {
        Catalog catalog = catalog(req.get("warehouse").asText());
        Identifier id = identifier(req);
        catalog.createDatabase(id.getDatabaseName(), true);
        Schema.Builder schema = Schema.newBuilder();
        for (JsonNode field : req.get("fields")) {
            schema.column(field.get("name").asText(), parseType(field.get("type")));
        }
        List<String> partitionKeys = stringList(req.get("partition_keys"));
        List<String> primaryKeys = stringList(req.get("primary_keys"));
        if (!partitionKeys.isEmpty()) {
            schema.partitionKeys(partitionKeys);
        }
        if (!primaryKeys.isEmpty()) {
            schema.primaryKey(primaryKeys);
        }
        schema.options(stringMap(req.get("table_options")));
        catalog.createTable(id, schema.build(), true);
        return NODES.objectNode();
    }

    /** The request's rows as rows of the table (columns matched by name; missing ones null). */
    static List<GenericRow> rows(JsonNode req, RowType rowType) {
        List<String> columns = stringList(req.get("columns"));
        List<DataField> fields = rowType.getFields();
        int[] source = new int[fields.size()];
        for (int i = 0; i < fields.size(); i++) {
            source[i] = columns.indexOf(fields.get(i).name());
        }
        List<GenericRow> out = new ArrayList<>();
        for (JsonNode values : req.get("rows")) {
            GenericRow row = new GenericRow(fields.size());
            for (int i = 0; i < fields.size(); i++) {
                if (source[i] >= 0) {
                    row.setField(i, toInternal(values.get(source[i]), fields.get(i).type()));
                }
            }
            out.add(row);
        }
        return out;
    }

    static ObjectNode write(JsonNode req) throws Exception {
        FileStoreTable table = fileTable(req);
        // data evolution: "write_columns" writes those columns only (withWriteType), and
        // "first_row_id" gives the new files that _FIRST_ROW_ID (the rows they update)
        RowType writeType =
                present(req, "write_columns")
                        ? table.rowType().project(stringList(req.get("write_columns")))
                        : null;
        List<GenericRow> rows = rows(req, writeType == null ? table.rowType() : writeType);
        int assigners = present(req, "assigners") ? req.get("assigners").asInt() : 1;
        boolean dynamic = table.bucketMode() == BucketMode.HASH_DYNAMIC;
        ObjectNode result = NODES.objectNode();
        if (present(req, "commit_user")) {
            // a streaming-style commit: the user's identifiers make it idempotent
            String user = req.get("commit_user").asText();
            long commitIdentifier = req.get("commit_identifier").asLong();
            if (present(req, "overwrite")) {
                throw new IllegalArgumentException("overwrite is a batch write");
            }
            StreamWriteBuilder builder = table.newStreamWriteBuilder().withCommitUser(user);
            try (StreamTableWrite write = builder.newWrite();
                    StreamTableCommit commit = builder.newCommit()) {
                write.withIOManager(ioManager());
                writeRows(table, write, rows, dynamic, assigners, user, false);
                List<CommitMessage> messages = write.prepareCommit(false, commitIdentifier);
                Map<Long, List<CommitMessage>> committables = new HashMap<>();
                committables.put(commitIdentifier, messages);
                result.put("committed", ((TableCommitImpl) commit).filterAndCommit(committables));
            }
        } else {
            BatchWriteBuilder builder = table.newBatchWriteBuilder();
            if (present(req, "overwrite")) {
                builder = builder.withOverwrite(stringMap(req.get("overwrite")));
            }
            try (BatchTableWrite write = builder.newWrite();
                    BatchTableCommit commit = builder.newCommit()) {
                write.withIOManager(ioManager());
                if (writeType != null) {
                    write.withWriteType(writeType);
                }
                writeRows(
                        table,
                        write,
                        rows,
                        dynamic,
                        assigners,
                        "java-oracle",
                        present(req, "overwrite"));
                List<CommitMessage> messages = write.prepareCommit();
                if (present(req, "first_row_id")) {
                    long firstRowId = req.get("first_row_id").asLong();
                    for (CommitMessage message : messages) {
                        List<org.apache.paimon.io.DataFileMeta> files =
                                ((org.apache.paimon.table.sink.CommitMessageImpl) message)
                                        .newFilesIncrement()
                                        .newFiles();
                        for (int i = 0; i < files.size(); i++) {
                            files.set(i, files.get(i).assignFirstRowId(firstRowId));
                        }
                    }
                }
                commit.commit(messages);
            }
        }
        result.put("snapshot_id", latestSnapshotId(table));
        return result;
    }

    /**
     * Cross-partition upsert tables (BucketMode.KEY_DYNAMIC): one GlobalIndexAssigner, as Paimon's
     * Flink sink runs it, bootstrapped from the table's live keys (IndexBootstrap); it emits each
     * row (and the retractions of keys that move partitions) with its bucket to write(row, bucket).
     */
    static void writeCrossPartition(FileStoreTable table, TableWrite write, List<GenericRow> rows)
            throws Exception {
        org.apache.paimon.crosspartition.GlobalIndexAssigner assigner =
                new org.apache.paimon.crosspartition.GlobalIndexAssigner(table);
        java.util.function.BiConsumer<org.apache.paimon.data.InternalRow, Integer> collector =
                (row, bucket) -> {
                    try {
                        write.write(row, bucket);
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                };
        // open(offHeapMemory, [compactionExecutor: 2.0 only,] ioManager, numAssigners, assignId,
        // collector): by reflection, so that the oracle compiles against 1.4 as well
        for (java.lang.reflect.Method method : assigner.getClass().getMethods()) {
            if (method.getName().equals("open")) {
                method.invoke(
                        assigner,
                        method.getParameterCount() == 6
                                ? new Object[] {0L, null, ioManager(), 1, 0, collector}
                                : new Object[] {0L, ioManager(), 1, 0, collector});
            }
        }
        try {
            new org.apache.paimon.crosspartition.IndexBootstrap(table)
                    .bootstrap(
                            1,
                            0,
                            key -> {
                                try {
                                    assigner.bootstrapKey(key);
                                } catch (Exception e) {
                                    throw new RuntimeException(e);
                                }
                            });
            for (GenericRow row : rows) {
                assigner.processInput(row);
            }
            assigner.endBoostrap(true);
        } finally {
            assigner.close();
        }
    }

    /**
     * Dynamic-bucket tables: buckets assigned as Paimon's Flink sink does (a HashBucketAssigner
     * over the index, or for an overwrite a SimpleHashBucketAssigner that starts afresh; with N
     * assigners, each key goes to the assigner BucketAssigner.computeAssigner picks), then
     * write(row, bucket).
     */
    static void writeRows(
            FileStoreTable table,
            TableWrite write,
            List<GenericRow> rows,
            boolean dynamic,
            int assigners,
            String commitUser,
            boolean overwrite)
            throws Exception {
        if (table.bucketMode() == BucketMode.KEY_DYNAMIC) {
            writeCrossPartition(table, write, rows);
            return;
        }
        if (!dynamic) {
            for (GenericRow row : rows) {
                write.write(row);
            }
            return;
        }
        long target = table.coreOptions().dynamicBucketTargetRowNum();
        Integer maxBuckets = table.coreOptions().dynamicBucketMaxBuckets();
        List<BucketAssigner> byId = new ArrayList<>();
        for (int i = 0; i < assigners; i++) {
            byId.add(
                    overwrite
                            ? new SimpleHashBucketAssigner(
                                    assigners, i, target, maxBuckets == null ? -1 : maxBuckets)
                            : new HashBucketAssigner(
                                    table.snapshotManager(),
                                    commitUser,
                                    table.store().newIndexFileHandler(),
                                    assigners,
                                    assigners,
                                    i,
                                    target,
                                    maxBuckets == null ? -1 : maxBuckets));
        }
        RowPartitionKeyExtractor extractor = new RowPartitionKeyExtractor(table.schema());
        for (GenericRow row : rows) {
            BinaryRow partition = extractor.partition(row);
            int keyHash = extractor.trimmedPrimaryKey(row).hashCode();
            int owner =
                    BucketAssigner.computeAssigner(
                            partition.hashCode(), keyHash, assigners, assigners);
            write.write(row, byId.get(owner).assign(partition, keyHash));
        }
    }

    /**
     * A full compaction of every (partition, bucket) the latest snapshot holds; bucket-unaware
     * append tables: the tasks of Paimon's AppendCompactCoordinator, as its compact actions run.
     */
    static ObjectNode compact(JsonNode req) throws Exception {
        FileStoreTable table = fileTable(req);
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        if (table.bucketMode() == BucketMode.BUCKET_UNAWARE) {
            // as a full compaction: every partition with more than one small file
            Map<String, String> full = new HashMap<>();
            full.put("compaction.min.file-num", "2");
            table = table.copy(full);
            List<AppendCompactTask> tasks = new AppendCompactCoordinator(table, false).run();
            List<CommitMessage> messages = new ArrayList<>();
            BaseAppendFileStoreWrite write =
                    (BaseAppendFileStoreWrite) table.store().newWrite("java-oracle");
            if (table.coreOptions().rowTrackingEnabled()) {
                // as Paimon's Flink/Spark compactors (AppendTableCompactor, CompactProcedure):
                // the rewritten files keep _ROW_ID and _SEQUENCE_NUMBER as columns
                write.withWriteType(
                        org.apache.paimon.table.SpecialFields.rowTypeWithRowTracking(
                                table.rowType()));
            }
            for (AppendCompactTask task : tasks) {
                messages.add(task.doCompact(table, write));
            }
            write.close();
            if (!messages.isEmpty()) {
                try (BatchTableCommit commit = builder.newCommit()) {
                    commit.commit(messages);
                }
            }
            ObjectNode result = NODES.objectNode();
            result.put("snapshot_id", latestSnapshotId(table));
            result.put("tasks", tasks.size());
            return result;
        }
        Set<String> seen = new HashSet<>();
        try (BatchTableWrite write = builder.newWrite();
                BatchTableCommit commit = builder.newCommit()) {
            write.withIOManager(ioManager());
            for (DataSplit split : table.newSnapshotReader().read().dataSplits()) {
                String key =
                        Arrays.toString(split.partition().toBytes()) + "/" + split.bucket();
                if (seen.add(key)) {
                    write.compact(split.partition(), split.bucket(), true);
                }
            }
            commit.commit(write.prepareCommit());
        }
        ObjectNode result = NODES.objectNode();
        result.put("snapshot_id", latestSnapshotId(table));
        result.put("buckets", seen.size());
        return result;
    }

    static ObjectNode read(JsonNode req) throws Exception {
        Table table = table(req);
        ReadBuilder builder = table.newReadBuilder();
        if (present(req, "projection")) {
            List<String> names = table.rowType().getFieldNames();
            List<String> wanted = stringList(req.get("projection"));
            int[] projection = new int[wanted.size()];
            for (int i = 0; i < projection.length; i++) {
                projection[i] = names.indexOf(wanted.get(i));
                if (projection[i] < 0) {
                    throw new IllegalArgumentException("no column " + wanted.get(i));
                }
            }
            builder = builder.withProjection(projection);
        }
        RowType readType = builder.readType();
        List<Split> splits = builder.newScan().plan().splits();
        ArrayNode rows = NODES.arrayNode();
        List<DataField> fields = readType.getFields();
        List<InternalRow.FieldGetter> getters = new ArrayList<>();
        for (int i = 0; i < fields.size(); i++) {
            getters.add(InternalRow.createFieldGetter(fields.get(i).type(), i));
        }
        try (RecordReader<InternalRow> reader = builder.newRead().createReader(splits)) {
            reader.forEachRemaining(
                    row -> {
                        ArrayNode values = NODES.arrayNode();
                        for (int i = 0; i < fields.size(); i++) {
                            values.add(
                                    toJson(getters.get(i).getFieldOrNull(row), fields.get(i).type()));
                        }
                        rows.add(values);
                    });
        }
        ObjectNode result = NODES.objectNode();
        result.set("fields", fieldsJson(readType));
        result.set("rows", rows);
        return result;
    }

    static ObjectNode snapshots(JsonNode req) throws Exception {
        SnapshotManager manager = fileTable(req).snapshotManager();
        Long earliest = manager.earliestSnapshotId();
        Long latest = manager.latestSnapshotId();
        ArrayNode out = NODES.arrayNode();
        if (latest != null) {
            for (long id = earliest; id <= latest; id++) {
                if (!manager.snapshotExists(id)) {
                    continue;
                }
                Snapshot snapshot = manager.snapshot(id);
                ObjectNode s = NODES.objectNode();
                s.put("id", id);
                s.put("commit_kind", snapshot.commitKind().toString());
                s.put("schema_id", snapshot.schemaId());
                s.put("commit_user", snapshot.commitUser());
                s.put("commit_identifier", snapshot.commitIdentifier());
                out.add(s);
            }
        }
        ObjectNode result = NODES.objectNode();
        result.set("snapshots", out);
        return result;
    }

    /** The snapshot file's text as it is on disk. */
    static ObjectNode snapshotJson(JsonNode req) throws Exception {
        FileStoreTable table = fileTable(req);
        long id = req.get("snapshot_id").asLong();
        ObjectNode result = NODES.objectNode();
        result.put(
                "json", table.fileIO().readFileUtf8(table.snapshotManager().snapshotPath(id)));
        return result;
    }

    static ObjectNode createTag(JsonNode req) throws Exception {
        Table table = fileTable(req);
        if (present(req, "snapshot_id")) {
            table.createTag(req.get("tag").asText(), req.get("snapshot_id").asLong());
        } else {
            table.createTag(req.get("tag").asText());
        }
        return NODES.objectNode();
    }

    static ObjectNode rollback(JsonNode req) throws Exception {
        FileStoreTable table = fileTable(req);
        if (present(req, "tag")) {
            table.rollbackTo(req.get("tag").asText());
        } else {
            table.rollbackTo(req.get("snapshot_id").asLong());
        }
        ObjectNode result = NODES.objectNode();
        result.put("snapshot_id", latestSnapshotId(table));
        return result;
    }

    static ObjectNode expire(JsonNode req) throws Exception {
        ExpireConfig config =
                ExpireConfig.builder()
                        .snapshotRetainMin(req.get("retain_min").asInt())
                        .snapshotRetainMax(
                                present(req, "retain_max")
                                        ? req.get("retain_max").asInt()
                                        : Integer.MAX_VALUE)
                        .snapshotTimeRetain(Duration.ZERO)
                        .build();
        ObjectNode result = NODES.objectNode();
        result.put("expired", fileTable(req).newExpireSnapshots().config(config).expire());
        return result;
    }

    static ObjectNode alter(JsonNode req) throws Exception {
        List<SchemaChange> changes = new ArrayList<>();
        for (JsonNode op : req.get("changes")) {
            String kind = op.get("op").asText();
            switch (kind) {
                case "add_column":
                    changes.add(
                            SchemaChange.addColumn(
                                    op.get("name").asText(), parseType(op.get("type"))));
                    break;
                case "drop_column":
                    changes.add(SchemaChange.dropColumn(op.get("name").asText()));
                    break;
                case "rename_column":
                    changes.add(
                            SchemaChange.renameColumn(
                                    op.get("name").asText(), op.get("new_name").asText()));
                    break;
                case "update_column_type":
                    changes.add(
                            SchemaChange.updateColumnType(
                                    op.get("name").asText(), parseType(op.get("type"))));
                    break;
                case "remove_option":
                    changes.add(SchemaChange.removeOption(op.get("key").asText()));
                    break;
                case "set_option":
                    changes.add(
                            SchemaChange.setOption(
                                    op.get("key").asText(), op.get("value").asText()));
                    break;
                default:
                    throw new IllegalArgumentException("unknown schema change " + kind);
            }
        }
        catalog(req.get("warehouse").asText()).alterTable(identifier(req), changes, false);
        return NODES.objectNode();
    }

    static ObjectNode createBranch(JsonNode req) throws Exception {
        Table table = fileTable(req);
        if (present(req, "tag")) {
            table.createBranch(req.get("branch").asText(), req.get("tag").asText());
        } else {
            table.createBranch(req.get("branch").asText());
        }
        return NODES.objectNode();
    }

    /** Every key of CoreOptions with its fallback (older) keys and its default. */
    static ObjectNode optionKeys() {
        ArrayNode out = NODES.arrayNode();
        for (ConfigOption<?> option : CoreOptions.getOptions()) {
            ObjectNode o = NODES.objectNode();
            o.put("key", option.key());
            ArrayNode fallbacks = NODES.arrayNode();
            for (FallbackKey fallback : option.fallbackKeys()) {
                fallbacks.add(fallback.getKey());
            }
            o.set("fallback_keys", fallbacks);
            Object dflt = option.defaultValue();
            if (dflt == null) {
                o.putNull("default");
            } else {
                o.put("default", dflt.toString());
            }
            out.add(o);
        }
        ObjectNode result = NODES.objectNode();
        result.set("options", out);
        return result;
    }

    /**
     * Statistics of the latest snapshot, committed as ANALYZE commits them: merged record count and
     * size, and per BIGINT column {"name": [distinct, min, max, nulls]}.
     */
    static ObjectNode analyze(JsonNode req) throws Exception {
        FileStoreTable table = fileTable(req);
        Snapshot snapshot = table.snapshotManager().latestSnapshot();
        Map<String, org.apache.paimon.stats.ColStats<?>> colStats = new HashMap<>();
        Iterator<Map.Entry<String, JsonNode>> columns = req.get("columns").fields();
        while (columns.hasNext()) {
            Map.Entry<String, JsonNode> column = columns.next();
            JsonNode v = column.getValue();
            int id = table.schema().nameToFieldMap().get(column.getKey()).id();
            colStats.put(
                    column.getKey(),
                    org.apache.paimon.stats.ColStats.newColStats(
                            id, v.get(0).asLong(), v.get(1).asLong(), v.get(2).asLong(), v.get(3).asLong(), 8L, 8L));
        }
        org.apache.paimon.stats.Statistics stats =
                new org.apache.paimon.stats.Statistics(
                        snapshot.id(),
                        snapshot.schemaId(),
                        req.get("merged_record_count").asLong(),
                        req.get("merged_record_size").asLong(),
                        colStats);
        try (BatchTableCommit commit = table.newBatchWriteBuilder().newCommit()) {
            commit.updateStatistics(stats);
        }
        ObjectNode result = NODES.objectNode();
        result.put("snapshot_id", table.snapshotManager().latestSnapshotId());
        return result;
    }

    /** BitmapDeletionVector bytes (magic number, then the bitmap) of each list of positions. */
    static ObjectNode dvBitmaps(JsonNode req) throws Exception {
        ArrayNode out = NODES.arrayNode();
        for (JsonNode positions : req.get("cases")) {
            BitmapDeletionVector vector = new BitmapDeletionVector();
            for (JsonNode position : positions) {
                vector.delete(position.asLong());
            }
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            int size = vector.serializeTo(new DataOutputStream(bytes));
            // serializeTo frames the vector: size, magic number + bitmap, checksum
            byte[] framed = bytes.toByteArray();
            out.add(
                    Base64.getEncoder()
                            .encodeToString(Arrays.copyOfRange(framed, 4, 4 + size)));
        }
        ObjectNode result = NODES.objectNode();
        result.set("vectors", out);
        return result;
    }

    /**
     * One file index (bitmap, bsi, bloom-filter) built by Java's writer over the given values (one
     * per row, nulls included), its bytes, and Java's reader's answers to the given queries over
     * them: the row positions, or null when the answer is not a row set (remain / skip).
     */
    static ObjectNode fileIndex(JsonNode req) throws Exception {
        DataType type = parseType(req.get("type"));
        FileIndexer indexer =
                FileIndexer.create(
                        req.get("index").asText(),
                        type,
                        Options.fromMap(stringMap(req.get("options"))));
        FileIndexWriter writer = indexer.createWriter();
        for (JsonNode value : req.get("values")) {
            writer.write(toInternal(value, type));
        }
        byte[] bytes = writer.serializedBytes();
        ObjectNode result = NODES.objectNode();
        result.put("bytes", Base64.getEncoder().encodeToString(bytes));
        ArrayNode answers = NODES.arrayNode();
        if (present(req, "queries")) {
            FileIndexReader reader =
                    indexer.createReader(new ByteArraySeekableStream(bytes), 0, bytes.length);
            FieldRef field = new FieldRef(0, "f", type);
            for (JsonNode query : req.get("queries")) {
                Object literal = toInternal(query.get("literal"), type);
                List<Object> literals = new ArrayList<>();
                if (query.has("literals")) {
                    for (JsonNode item : query.get("literals")) {
                        literals.add(toInternal(item, type));
                    }
                }
                FileIndexResult answer;
                switch (query.get("op").asText()) {
                    case "equal":
                        answer = reader.visitEqual(field, literal);
                        break;
                    case "not_equal":
                        answer = reader.visitNotEqual(field, literal);
                        break;
                    case "in":
                        answer = reader.visitIn(field, literals);
                        break;
                    case "not_in":
                        answer = reader.visitNotIn(field, literals);
                        break;
                    case "is_null":
                        answer = reader.visitIsNull(field);
                        break;
                    case "is_not_null":
                        answer = reader.visitIsNotNull(field);
                        break;
                    case "<":
                        answer = reader.visitLessThan(field, literal);
                        break;
                    case "<=":
                        answer = reader.visitLessOrEqual(field, literal);
                        break;
                    case ">":
                        answer = reader.visitGreaterThan(field, literal);
                        break;
                    case ">=":
                        answer = reader.visitGreaterOrEqual(field, literal);
                        break;
                    default:
                        throw new IllegalArgumentException("unknown query " + query);
                }
                if (answer instanceof BitmapIndexResult) {
                    ArrayNode rows = NODES.arrayNode();
                    Iterator<Integer> it = ((BitmapIndexResult) answer).get().iterator();
                    while (it.hasNext()) {
                        rows.add(it.next());
                    }
                    answers.add(rows);
                } else {
                    answers.add(answer.remain());
                }
            }
        }
        result.set("answers", answers);
        return result;
    }
}

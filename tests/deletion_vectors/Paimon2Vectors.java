/*
 * Deletion vectors through Apache Paimon 2.0's Java core, for tests/deletion_vectors/test_bitmap64.py.
 * Run as a single-file source: java -cp '.jars/paimon-2.0.0/*:.jars/lib/*' Paimon2Vectors.java <mode> ...
 *
 *   bytes          stdin: one line per vector, its positions separated by spaces (an empty line is
 *                  an empty vector); stdout: one line per vector, the hex of
 *                  DeletionVector.serializeToBytes() (size int, vector, CRC) of a
 *                  Bitmap64DeletionVector holding those positions.
 *   write W        creates table db.t in warehouse W (id BIGINT primary key, v STRING, bucket 1,
 *                  deletion-vectors.enabled, deletion-vectors.bitmap64) and commits the batches
 *                  read from stdin: one line per commit, "id:v id:v ...", v "-" for a delete.
 *   read W T       prints the rows of table T ("db.t") of warehouse W, one "id:v" line each.
 */

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.deletionvectors.Bitmap64DeletionVector;
import org.apache.paimon.deletionvectors.DeletionVector;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.fs.Path;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.types.DataTypes;
import org.apache.paimon.types.RowKind;

public class Paimon2Vectors {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        switch (args[0]) {
            case "bytes":
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    Bitmap64DeletionVector vector = new Bitmap64DeletionVector();
                    for (String p : line.trim().split(" ")) {
                        if (!p.isEmpty()) {
                            vector.delete(Long.parseLong(p));
                        }
                    }
                    System.out.println(HexFormat.of().formatHex(DeletionVector.serializeToBytes(vector)));
                }
                break;
            case "write":
                write(args[1], in);
                break;
            case "read":
                read(args[1], args[2]);
                break;
            default:
                throw new IllegalArgumentException(args[0]);
        }
    }

    private static Catalog catalog(String warehouse) {
        return CatalogFactory.createCatalog(CatalogContext.create(new Path(warehouse)));
    }

    private static void write(String warehouse, BufferedReader in) throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            catalog.createDatabase("db", true);
            Schema schema =
                    Schema.newBuilder()
                            .column("id", DataTypes.BIGINT().notNull())
                            .column("v", DataTypes.STRING())
                            .primaryKey("id")
                            .option("bucket", "1")
                            .option("file.format", "parquet")
                            .option("deletion-vectors.enabled", "true")
                            .option("deletion-vectors.bitmap64", "true")
                            .build();
            Identifier id = Identifier.create("db", "t");
            catalog.createTable(id, schema, false);
            Table table = catalog.getTable(id);
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                BatchWriteBuilder builder = table.newBatchWriteBuilder();
                try (BatchTableWrite write =
                                (BatchTableWrite)
                                        builder.newWrite()
                                                .withIOManager(
                                                        IOManager.create(
                                                                System.getProperty("java.io.tmpdir")));
                        BatchTableCommit commit = builder.newCommit()) {
                    for (String pair : line.trim().split(" ")) {
                        String[] kv = pair.split(":", 2);
                        long key = Long.parseLong(kv[0]);
                        if (kv[1].equals("-")) {
                            write.write(GenericRow.ofKind(RowKind.DELETE, key, null));
                        } else {
                            write.write(GenericRow.of(key, BinaryString.fromString(kv[1])));
                        }
                    }
                    commit.commit(write.prepareCommit());
                }
            }
        }
    }

    private static void read(String warehouse, String identifier) throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            Table table = catalog.getTable(Identifier.fromString(identifier));
            ReadBuilder builder = table.newReadBuilder();
            List<String> out = new ArrayList<>();
            try (RecordReader<InternalRow> reader = builder.newRead().createReader(builder.newScan().plan())) {
                reader.forEachRemaining(row -> out.add(row.getLong(0) + ":" + (row.isNullAt(1) ? "null" : row.getString(1).toString())));
            }
            out.forEach(System.out::println);
        }
    }
}

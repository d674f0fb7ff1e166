/*
 * Tables with Paimon 2.0's newer column types and a column default value, written by Apache
 * Paimon 2.0.0's Java core for tests/fixtures/paimon2_types (see tests/fixtures/README.md):
 *   java -cp '.jars/paimon-2.0.0/*:.jars/lib/*' tests/format/Paimon2Types.java write <warehouse>
 * db.vec: id BIGINT primary key, vec VECTOR<FLOAT, 3>, d INT DEFAULT 7, two rows (the second
 * writes d = 5; the first writes null, which Paimon's writer replaces by the default);
 * db.var (VARIANT column) and db.blob (BLOB column, row tracking and data evolution): schemas only.
 * "read <warehouse> <db.table>" prints the table's row type, then per row its BIGINT first column
 * and its VECTOR<FLOAT, n> second column ("1 [1.0, 2.0, 3.0]", "2 null").
 */
import org.apache.paimon.catalog.*;
import org.apache.paimon.data.*;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.fs.Path;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.*;
import org.apache.paimon.types.*;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.table.source.ReadBuilder;
import java.util.Arrays;

public class Paimon2Types {
    public static void main(String[] args) throws Exception {
        Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(new Path(args[1])));
        if (args[0].equals("read")) {
            Table table = catalog.getTable(Identifier.fromString(args[2]));
            System.out.println(table.rowType());
            ReadBuilder rb = table.newReadBuilder();
            try (RecordReader<InternalRow> r = rb.newRead().createReader(rb.newScan().plan())) {
                r.forEachRemaining(
                        row ->
                                System.out.println(
                                        row.getLong(0)
                                                + " "
                                                + (row.isNullAt(1)
                                                        ? "null"
                                                        : Arrays.toString(row.getVector(1).toFloatArray()))));
            }
            return;
        }
        catalog.createDatabase("db", true);
        Schema schema = Schema.newBuilder()
            .column("id", DataTypes.BIGINT().notNull())
            .column("vec", new VectorType(3, DataTypes.FLOAT()))
            .column("d", DataTypes.INT(), null, "7")
            .primaryKey("id").option("bucket", "1").option("file.format", "parquet").build();
        catalog.createTable(Identifier.create("db", "vec"), schema, false);
        Table table = catalog.getTable(Identifier.create("db", "vec"));
        BatchWriteBuilder b = table.newBatchWriteBuilder();
        try (BatchTableWrite w = (BatchTableWrite) b.newWrite().withIOManager(IOManager.create("/tmp")); BatchTableCommit c = b.newCommit()) {
            w.write(GenericRow.of(1L, BinaryVector.fromPrimitiveArray(new float[] {1f, 2f, 3f}), null));
            w.write(GenericRow.of(2L, null, 5));
            c.commit(w.prepareCommit());
        }
        Schema v = Schema.newBuilder().column("id", DataTypes.BIGINT()).column("var", DataTypes.VARIANT()).option("file.format", "parquet").build();
        catalog.createTable(Identifier.create("db", "var"), v, false);
        try {
            Schema bl = Schema.newBuilder().column("id", DataTypes.BIGINT()).column("b", DataTypes.BLOB())
                .option("row-tracking.enabled", "true").option("data-evolution.enabled", "true").build();
            catalog.createTable(Identifier.create("db", "blob"), bl, false);
        } catch (Exception e) { System.out.println("blob: " + e); }
    }
}

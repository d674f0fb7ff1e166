/*
 * Paimon Java's filtered reads, for tests/interop/test_java_file_index.py. Per query
 * "<db.table>|<column>=<literal>" (literal parsed for the column's type: integers, strings): the
 * data files Paimon's scan plans with the filter (indexes embedded in manifest entries prune
 * here), how many of those its readers skip by their separate <data file>.index file (what
 * FileIndexEvaluator does before reading a file: FileIndexPredicate over the index file), and
 * the rows its reader returns. One JSON line per query on stdout.
 *
 * Run: java -cp '.jars/paimon-2.0.0/*:.jars/lib/*' tests/interop/PaimonFileIndexScan.java
 *      <warehouse> <db.table>|<column>=<literal>...
 */

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.fileindex.FileIndexPredicate;
import org.apache.paimon.fs.Path;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.predicate.Predicate;
import org.apache.paimon.predicate.PredicateBuilder;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypeRoot;
import org.apache.paimon.types.RowType;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

public class PaimonFileIndexScan {

    static Object literal(DataType type, String text) {
        DataTypeRoot root = type.getTypeRoot();
        switch (root) {
            case TINYINT:
                return Byte.parseByte(text);
            case SMALLINT:
                return Short.parseShort(text);
            case INTEGER:
                return Integer.parseInt(text);
            case BIGINT:
                return Long.parseLong(text);
            case CHAR:
            case VARCHAR:
                return BinaryString.fromString(text);
            default:
                throw new IllegalArgumentException("literal of type " + type + " not supported here");
        }
    }

    public static void main(String[] args) throws Exception {
        Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(new Path(args[0])));
        for (int q = 1; q < args.length; q++) {
            String[] tq = args[q].split("\\|", 2);
            FileStoreTable table = (FileStoreTable) catalog.getTable(Identifier.fromString(tq[0]));
            RowType rowType = table.rowType();
            PredicateBuilder builder = new PredicateBuilder(rowType);
            String[] kv = tq[1].split("=", 2);
            int index = rowType.getFieldIndex(kv[0]);
            Predicate predicate =
                    builder.equal(index, literal(rowType.getTypeAt(index), kv[1]));
            ReadBuilder read = table.newReadBuilder().withFilter(predicate);
            List<Split> splits = read.newScan().plan().splits();
            int files = 0;
            int skippedByIndexFile = 0;
            for (Split split : splits) {
                DataSplit dataSplit = (DataSplit) split;
                files += dataSplit.dataFiles().size();
                for (DataFileMeta file : dataSplit.dataFiles()) {
                    for (String extra : file.extraFiles()) {
                        if (!extra.endsWith(".index")) {
                            continue;
                        }
                        Path dataPath =
                                table.store()
                                        .pathFactory()
                                        .createDataFilePathFactory(
                                                dataSplit.partition(), dataSplit.bucket())
                                        .toPath(file);
                        Path indexPath = new Path(dataPath.getParent(), extra);
                        try (FileIndexPredicate filePredicate =
                                new FileIndexPredicate(indexPath, table.fileIO(), rowType)) {
                            if (!filePredicate.evaluate(predicate).remain()) {
                                skippedByIndexFile++;
                            }
                        }
                    }
                }
            }
            AtomicLong rows = new AtomicLong();
            try (RecordReader<InternalRow> reader = read.newRead().createReader(splits)) {
                reader.forEachRemaining(row -> rows.incrementAndGet());
            }
            System.out.println(
                    "{\"query\": \""
                            + args[q]
                            + "\", \"files\": "
                            + files
                            + ", \"skipped_by_index_file\": "
                            + skippedByIndexFile
                            + ", \"rows\": "
                            + rows.get()
                            + "}");
        }
        catalog.close();
    }
}

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.fs.Path;
import org.apache.paimon.fs.local.LocalFileIO;
import org.apache.paimon.options.Options;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.FileStoreTableFactory;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.types.DataTypes;

/**
 * One Paimon Java commit into an append table {@code (id BIGINT, v STRING)}, for the tests of two
 * engines publishing snapshots of one table at once (tests/interop/test_mixed_engines.py).
 *
 * <pre>
 * java RaceCommit create WAREHOUSE DB.TABLE [catalog-option=value ...]
 * java RaceCommit commit WAREHOUSE DB.TABLE ID VALUE [--pause] [catalog-option=value ...]
 * </pre>
 *
 * <p>{@code --pause} widens the window Paimon's local publish leaves open. Paimon's {@code
 * LocalFileIO.rename} (2.0.0) checks that the target is absent under a lock private to its own
 * process and then moves the file with {@code ATOMIC_MOVE}, which replaces a file another process
 * created in between. The {@link PausingLocalFileIO} below takes the same two steps for snapshot
 * files and stops between them: it prints {@code @@window snapshot-N} and waits for a line on
 * stdin. Everything else (the commit, the catalog lock when the catalog has one) is Paimon's own
 * code. Prints {@code @@committed} when the commit returned.
 */
public class RaceCommit {

    public static void main(String[] args) throws Exception {
        String command = args[0];
        String warehouse = args[1];
        Identifier identifier = Identifier.fromString(args[2]);
        boolean pause = false;
        List<String> rest = new ArrayList<>();
        Options options = new Options();
        options.set("warehouse", warehouse);
        for (int i = 3; i < args.length; i++) {
            if (args[i].equals("--pause")) {
                pause = true;
            } else if (args[i].contains("=")) {
                String[] kv = args[i].split("=", 2);
                options.set(kv[0], kv[1]);
            } else {
                rest.add(args[i]);
            }
        }
        try (Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(options))) {
            if (command.equals("create")) {
                catalog.createDatabase(identifier.getDatabaseName(), true);
                Schema schema =
                        Schema.newBuilder()
                                .column("id", DataTypes.BIGINT())
                                .column("v", DataTypes.STRING())
                                .option("bucket", "-1")
                                .build();
                catalog.createTable(identifier, schema, true);
                System.out.println("@@created");
                return;
            }
            FileStoreTable table = (FileStoreTable) catalog.getTable(identifier);
            if (pause) {
                table =
                        FileStoreTableFactory.create(
                                new PausingLocalFileIO(),
                                table.location(),
                                table.schema(),
                                new Options(),
                                table.catalogEnvironment());
            }
            BatchWriteBuilder builder = table.newBatchWriteBuilder();
            try (BatchTableWrite write = builder.newWrite();
                    BatchTableCommit commit = builder.newCommit()) {
                write.write(
                        GenericRow.of(
                                Long.parseLong(rest.get(0)), BinaryString.fromString(rest.get(1))));
                commit.commit(write.prepareCommit());
            }
            System.out.println("@@committed");
        }
    }

    /** {@link LocalFileIO} whose snapshot renames stop between the absence check and the move. */
    public static class PausingLocalFileIO extends LocalFileIO {
        @Override
        public boolean rename(Path src, Path dst) throws IOException {
            if (!dst.getName().startsWith("snapshot-")) {
                return super.rename(src, dst);
            }
            java.io.File target = toFile(dst);
            if (target.exists()) {
                return false;
            }
            System.out.println("@@window " + dst.getName());
            System.out.flush();
            BufferedReader stdin =
                    new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            stdin.readLine();
            Files.move(
                    toFile(src).toPath(), target.toPath(), StandardCopyOption.ATOMIC_MOVE);
            return true;
        }
    }
}

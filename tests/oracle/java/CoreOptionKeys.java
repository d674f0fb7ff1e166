import java.util.List;

import org.apache.paimon.CoreOptions;
import org.apache.paimon.options.ConfigOption;
import org.apache.paimon.options.FallbackKey;

/**
 * Prints every key of Paimon's {@code CoreOptions.getOptions()}, one per line, tab separated:
 * {@code key<TAB>primary-or-fallback-of<TAB>default}. A fallback key's line names the key it
 * falls back to; the default is empty when the option has none. Run as a single-file source:
 * {@code java -cp '.jars/paimon-2.0.0/*:.jars/lib/*' tests/oracle/java/CoreOptionKeys.java}.
 */
public class CoreOptionKeys {
    public static void main(String[] args) {
        List<ConfigOption<?>> options = CoreOptions.getOptions();
        for (ConfigOption<?> option : options) {
            String defaultValue = option.hasDefaultValue() ? String.valueOf(option.defaultValue()) : "";
            defaultValue = defaultValue.replace('\t', ' ').replace('\n', ' ');
            System.out.println(option.key() + "\t\t" + defaultValue);
            for (FallbackKey fallback : option.fallbackKeys()) {
                System.out.println(fallback.getKey() + "\t" + option.key() + "\t" + defaultValue);
            }
        }
    }
}

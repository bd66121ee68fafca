package org.htod.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.Callable;
import org.htod.HtodStore;
import org.htod.StoreEntry;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "dump", description = "Every entry as a JSON line on stdout (key and value as text where they are"
        + " UTF-8, base64 under key64/value64 where not).")
final class DumpCommand implements Callable<Integer> {
    @Parameters(index = "0", description = "the store file")
    Path store;

    @Option(names = "--map", description = "only this map (repeatable); all maps by default")
    List<String> maps;

    @Option(names = "--keys-only", description = "map and key only")
    boolean keysOnly;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        try (HtodStore s = Stores.open(store)) {
            write(s, maps, keysOnly, spec.commandLine().getOut());
        }
        return Exit.OK.code;
    }

    static long write(HtodStore s, List<String> maps, boolean keysOnly, PrintWriter out) {
        long n = 0;
        for (String map : maps == null ? s.mapNames().stream().sorted().toList() : maps) {
            for (Iterator<StoreEntry> it = s.entries(map); it.hasNext();) {
                out.println(EntryLines.write(it.next(), keysOnly).toString());
                n++;
            }
        }
        out.flush();
        return n;
    }
}

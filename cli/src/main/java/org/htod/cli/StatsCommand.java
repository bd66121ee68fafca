package org.htod.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.htod.HtodStore;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "stats", description = "The store's statistics snapshot (HtodStore.stats()), as taken right after"
        + " opening it: layout, entries per map, space, fragmentation, the opening's device I/O and recovery.")
final class StatsCommand implements Callable<Integer> {
    @Parameters(index = "0", description = "the store file")
    Path store;

    @Option(names = "--json", description = "one JSON object instead of indented JSON")
    boolean json;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        try (HtodStore s = Stores.open(store)) {
            var writer = json ? Json.MAPPER.writer() : Json.MAPPER.writerWithDefaultPrettyPrinter();
            spec.commandLine().getOut().println(writer.writeValueAsString(s.stats()));
        }
        return Exit.OK.code;
    }
}

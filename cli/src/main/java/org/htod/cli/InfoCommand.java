package org.htod.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import org.htod.HtodStore;
import org.htod.StoreStats;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

@Command(name = "info", description = "Format, layout, storage method, allocator parameters, maps with entry counts,"
        + " fragmentation, and whether the store had been closed cleanly.")
final class InfoCommand implements Callable<Integer> {
    @Parameters(index = "0", description = "the store file")
    Path store;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        try (HtodStore s = Stores.open(store)) {
            StoreStats st = s.stats();
            PrintWriter out = spec.commandLine().getOut();
            StoreStats.Layout l = st.layout();
            out.printf("store            %s%n", l.name());
            out.printf("format version   %d%n", l.formatVersion());
            out.printf("mode             %s%n", l.logged() ? "log" : "direct");
            out.printf("storage method   %s%n", l.storageMethod());
            out.printf("grain            %d bytes%n", l.grain());
            out.printf("quick lists      %d%n", l.maxQuickList());
            out.printf("acceptable waste %d bytes%n", l.acceptableWaste());
            out.printf("OBA threshold    %d bytes%n", l.obaThreshold());
            out.printf("log region       %d bytes%n", l.logBytes());
            out.printf("heap             at %d, %d of %d bytes used%n", l.heapOffset(), st.space().heapUsedBytes(),
                    l.heapCapacity());
            out.printf("file             %d bytes%n", st.space().fileBytes());
            out.printf("closed cleanly   %s%n", st.lastRecovery().clean() ? "yes" : "no (" + st.lastRecovery() + ")");
            out.printf("fragmentation    internal %.3f, external %.3f, total %.3f%n", st.fragmentation().internal(),
                    st.fragmentation().external(), st.fragmentation().total());
            out.printf("maps             %d, %d entries%n", st.entries().size(), st.totalEntries());
            for (Map.Entry<String, Long> e : st.entries().entrySet()) {
                out.printf("  %-30s %d%n", e.getKey(), e.getValue());
            }
        }
        return Exit.OK.code;
    }
}

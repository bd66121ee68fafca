package org.htod.sample;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.htod.core.alloc.HeapStats;
import org.htod.core.container.ContainerConfig;
import org.htod.core.device.MemoryDevice;
import org.htod.core.storage.Storage;

/**
 * A first run of htod's storage layers: stores a small publishing site's fragments in one
 * container, closes it, reopens it from the shutdown snapshot, and reads them back. Until the
 * sample server exists this is what {@code java -jar deploy-sample/target/htod-sample.jar} runs.
 */
public final class Demo {
    private Demo() {}

    public static void main(String[] args) throws IOException {
        Path image = args.length > 0 ? Path.of(args[0]) : Path.of("target", "demo-store.img");
        Files.createDirectories(image.toAbsolutePath().getParent());
        List<String> pages = List.of("/index.html", "/sports/ski/results.html", "/sports/ski/medals.html",
                "/news/today.html", "/weather/sydney.html");

        MemoryDevice device = new MemoryDevice();
        List<Long> handles = new ArrayList<>();
        try (Storage store = Storage.create(device, ContainerConfig.builder().logSize(0).build())) {
            List<ByteBuffer> batch = new ArrayList<>();
            for (String page : pages) {
                batch.add(utf8("<div class=\"fragment\">" + page + " " + "x".repeat(page.length() * 40) + "</div>"));
            }
            for (long h : store.heap().allocateBatch(batch)) {
                handles.add(h);
            }
            long scratch = store.heap().allocate(utf8("a draft that is thrown away"));
            store.heap().free(scratch);
            HeapStats s = store.heap().stats();
            System.out.printf("stored %d fragments in one batch (OBA): %d bytes allocated, tail at %d%n",
                    pages.size(), s.allocatedBytes(), s.tailOffset());
        }

        try (Storage store = Storage.open(device.reopen())) {
            System.out.println("reopened: " + store.recoveryReport());
            for (int i = 0; i < pages.size(); i++) {
                String text = StandardCharsets.UTF_8.decode(store.heap().read(handles.get(i))).toString();
                System.out.printf("  %-28s %5d bytes  %s...%n", pages.get(i), text.length(), text.substring(0, 40));
            }
            System.out.println("verified: " + store.heap().verify());
        }
        // The image is written out so that it can be looked at with a hex viewer.
        saveImage(device.reopen(), image);
        System.out.println("container image written to " + image.toAbsolutePath());
    }

    private static ByteBuffer utf8(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    private static void saveImage(MemoryDevice device, Path image) throws IOException {
        ByteBuffer all = ByteBuffer.allocate(Math.toIntExact(device.size()));
        device.read(0, all);
        Files.write(image, all.array());
    }
}

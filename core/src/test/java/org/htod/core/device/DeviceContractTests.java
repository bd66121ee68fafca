package org.htod.core.device;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Nested;

/** Every device under the one contract. */
class DeviceContractTests {
    static Path testDir() throws java.io.IOException {
        Path dir = Path.of(System.getProperty("htod.test.dir", "target/test-stores"));
        Files.createDirectories(dir);
        return dir;
    }

    @Nested
    class Memory extends BlockDeviceContractTest {
        @Override
        BlockDevice create() {
            return new MemoryDevice(CAPACITY, 512);
        }
    }

    /** A file, its reads through mappings where they can ({@link #mapReads}), else through its channel. */
    abstract class OnFile extends BlockDeviceContractTest {
        private final java.util.List<Path> files = new java.util.ArrayList<>();

        abstract boolean mapReads();

        @Override
        BlockDevice create() throws Exception {
            Path f = Files.createTempFile(testDir(), "contract", ".htod");
            files.add(f);
            return FileDevice.open(f, CAPACITY, 512, mapReads());
        }

        @Override
        void cleanUp() throws Exception {
            for (Path f : files) {
                Files.deleteIfExists(f);
            }
        }
    }

    @Nested
    class File extends OnFile {
        @Override
        boolean mapReads() {
            return true;
        }
    }

    /** A file whose reads all go through the channel, none through mappings. */
    @Nested
    class FileUnmapped extends OnFile {
        @Override
        boolean mapReads() {
            return false;
        }
    }

    @Nested
    class Counting extends BlockDeviceContractTest {
        @Override
        BlockDevice create() {
            return new CountingDevice(new MemoryDevice(CAPACITY, 512));
        }
    }

    @Nested
    class Crash extends BlockDeviceContractTest {
        @Override
        BlockDevice create() {
            return new CrashDevice(new MemoryDevice(CAPACITY, 512));
        }
    }

    @Nested
    class Faulty extends BlockDeviceContractTest {
        @Override
        BlockDevice create() {
            return new FaultyDevice(new MemoryDevice(CAPACITY, 512));
        }
    }

    @Nested
    class Overlay extends BlockDeviceContractTest {
        @Override
        BlockDevice create() {
            return new OverlayDevice(new MemoryDevice(CAPACITY, 512));
        }
    }

    @Nested
    class Raw extends BlockDeviceContractTest {
        private final java.util.List<Path> files = new java.util.ArrayList<>();

        @Override
        BlockDevice create() throws Exception {
            Path f = Files.createTempFile(testDir(), "raw", ".htod");
            files.add(f);
            return RawDeviceTest.openOrSkip(f, CAPACITY);
        }

        @Override
        void cleanUp() throws Exception {
            for (Path f : files) {
                Files.deleteIfExists(f);
            }
        }
    }
}

package org.htod.bench.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * The paper's file-system baseline: one file per object, named from its key the way a publishing
 * site lays out its documents.
 *
 * <p>Layout under the store directory:
 *
 * <ul>
 *   <li>{@code u/...}: a key that is a URL path, {@code /sports/ski/results.html}, is the file
 *       {@code u/sports/ski/results.html}. A key is a URL path when it is UTF-8, starts with
 *       {@code /}, and every segment is non-empty, at most 255 bytes, not {@code .} or {@code ..},
 *       and made of {@code A-Z a-z 0-9 . _ - ~} only.
 *   <li>{@code h/XX/YY/HEX}: any other key, where {@code HEX} is the key in hexadecimal (so the key
 *       is recovered from the name when iterating) and {@code XX/YY} are the first two bytes of
 *       the key's CRC32C, spreading files over 65,536 directories. Such keys are at most 127 bytes.
 * </ul>
 *
 * <p>Like a site on a file system, it cannot hold both {@code /a} and {@code /a/b}: that put fails
 * with a {@link StoreException}. Directories emptied by removes are left in place.
 *
 * <p>Durability: at {@link Durability#NONE} a put writes the file in place ({@code
 * Files.write}, truncating the old content) and the operating system writes it back when it
 * likes. At {@link Durability#SYNC} a put writes {@code NAME#tmp} beside the target, forces it
 * ({@code FileChannel.force}), renames it over the target atomically, and forces the directory so
 * that the rename itself is durable (and every directory it had to create, up to the store root);
 * a remove forces the directory after deleting. A reader never sees a half-written file at SYNC;
 * at NONE it may after a crash.
 *
 * <p>Concurrent mode (SYNC only, for the durable-put benchmark, {@link DurableStores}): puts may
 * come from many threads at once. Each thread writes its own {@code NAME#<n>#tmp}, so that two
 * puts of one key never share a temporary file (the last rename wins), and missing directories
 * are created and forced under a write lock, while a put checks that its directory exists under
 * the read lock: a put that finds the directory made by another thread knows that the directory
 * is durable already. Syncs of different threads overlap as far as the file system lets them.
 */
final class FilePerObjectStore implements KeyValueStore {

    static final String NAME = "file-per-object";

    private static final String TMP_SUFFIX = "#tmp";
    private static final HexFormat HEX = HexFormat.of();
    private static final int MAX_SEGMENT = 255;
    private static final int MAX_HEX_KEY = 127;

    private final Path dir;
    private final Path urlRoot;
    private final Path hashRoot;
    private final Durability durability;
    /** Whether puts may come from many threads at once (concurrent mode); else single-threaded. */
    private final boolean concurrent;
    /** Concurrent mode: held to write while directories are created and forced, to read while a put checks them. */
    private final ReadWriteLock directories = new ReentrantReadWriteLock();
    /** Concurrent mode: each thread's number, which names its temporary files. */
    private final ThreadLocal<String> threadTmpSuffix;

    FilePerObjectStore(Path dir, Durability durability) {
        this(dir, durability, false);
    }

    /**
     * A store at {@code durability}; in concurrent mode (which needs {@link Durability#SYNC}) safe for
     * puts from many threads at once.
     */
    FilePerObjectStore(Path dir, Durability durability, boolean concurrent) {
        if (concurrent && durability != Durability.SYNC) {
            throw new IllegalArgumentException(NAME + ": concurrent mode needs SYNC durability, found " + durability);
        }
        this.dir = dir;
        this.urlRoot = dir.resolve("u");
        this.hashRoot = dir.resolve("h");
        this.durability = durability;
        this.concurrent = concurrent;
        AtomicLong threads = new AtomicLong();
        this.threadTmpSuffix = ThreadLocal.withInitial(() -> "#" + threads.incrementAndGet() + TMP_SUFFIX);
        try {
            Files.createDirectories(urlRoot);
            Files.createDirectories(hashRoot);
            if (durability == Durability.SYNC) {
                forceDirectory(dir);
            }
        } catch (IOException e) {
            throw new StoreException(NAME + ": cannot create " + dir, e);
        }
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Durability durability() {
        return durability;
    }

    @Override
    public void put(byte[] key, byte[] value) {
        Path file = pathOf(key);
        if (Files.isDirectory(file)) {
            throw new StoreException(NAME + ": key " + describe(key)
                    + " names a directory that holds other keys: " + file);
        }
        try {
            List<Path> created = concurrent ? ensureParentShared(file) : ensureParent(file);
            if (durability == Durability.NONE) {
                Files.write(file, value);
                return;
            }
            Path tmp = file.resolveSibling(file.getFileName() + (concurrent ? threadTmpSuffix.get() : TMP_SUFFIX));
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE,
                    StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
                ByteBuffer buf = ByteBuffer.wrap(value);
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                ch.force(false);
            }
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            forceDirectory(file.getParent());
            for (Path d : created) {
                forceDirectory(d.getParent());
            }
        } catch (FileAlreadyExistsException | NotDirectoryException e) {
            throw new StoreException(NAME + ": key " + describe(key)
                    + " needs a file where a directory is, or a directory where a file is: " + file, e);
        } catch (IOException e) {
            throw new StoreException(NAME + ": cannot write " + file, e);
        }
    }

    @Override
    public byte[] get(byte[] key) {
        Path file = pathOf(key);
        try {
            return Files.readAllBytes(file);
        } catch (NoSuchFileException | NotDirectoryException e) {
            return null;
        } catch (IOException e) {
            if (Files.isDirectory(file)) {
                return null;
            }
            throw new StoreException(NAME + ": cannot read " + file, e);
        }
    }

    @Override
    public boolean remove(byte[] key) {
        Path file = pathOf(key);
        try {
            if (Files.isDirectory(file)) {
                return false;
            }
            boolean removed = Files.deleteIfExists(file);
            if (removed && durability == Durability.SYNC) {
                forceDirectory(file.getParent());
            }
            return removed;
        } catch (NotDirectoryException e) {
            return false;
        } catch (IOException e) {
            throw new StoreException(NAME + ": cannot delete " + file, e);
        }
    }

    @Override
    public void forEachKey(Consumer<byte[]> action) {
        walk((key, file) -> action.accept(key));
    }

    @Override
    public void forEachValue(Consumer<byte[]> action) {
        walk((key, file) -> action.accept(read(file)));
    }

    @Override
    public void forEachEntry(BiConsumer<byte[], byte[]> action) {
        walk((key, file) -> action.accept(key, read(file)));
    }

    /** Nothing is buffered in the process: NONE writes are already with the OS, SYNC ones on disk. */
    @Override
    public void flush() {}

    @Override
    public long diskBytes() {
        return DiskUsage.apparentBytes(dir);
    }

    @Override
    public void close() {}

    // ---------------------------------------------------------------------------------------------

    Path pathOf(byte[] key) {
        String url = urlPath(key);
        if (url != null) {
            return urlRoot.resolve(url.substring(1));
        }
        if (key.length > MAX_HEX_KEY) {
            throw new StoreException(NAME + ": a key that is not a URL path must be at most " + MAX_HEX_KEY
                    + " bytes, got " + key.length);
        }
        CRC32C crc = new CRC32C();
        crc.update(key);
        int h = (int) crc.getValue();
        String a = String.format("%02x", (h >>> 24) & 0xff);
        String b = String.format("%02x", (h >>> 16) & 0xff);
        return hashRoot.resolve(a).resolve(b).resolve(HEX.formatHex(key));
    }

    /** The key as a URL path when it qualifies for the {@code u/} tree, else null. */
    static String urlPath(byte[] key) {
        String s;
        try {
            s = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(key))
                    .toString();
        } catch (CharacterCodingException e) {
            return null;
        }
        if (s.length() < 2 || s.charAt(0) != '/') {
            return null;
        }
        int start = 1;
        for (int i = 1; i <= s.length(); i++) {
            if (i == s.length() || s.charAt(i) == '/') {
                int len = i - start;
                if (len == 0 || len > MAX_SEGMENT) {
                    return null;
                }
                String seg = s.substring(start, i);
                if (seg.equals(".") || seg.equals("..")) {
                    return null;
                }
                start = i + 1;
            } else if (!safe(s.charAt(i))) {
                return null;
            }
        }
        return s;
    }

    private static boolean safe(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '.' || c == '_' || c == '-' || c == '~';
    }

    /** Creates the missing parent directories of {@code file}; returns those it created, top first. */
    private static List<Path> ensureParent(Path file) throws IOException {
        Path parent = file.getParent();
        if (Files.isDirectory(parent)) {
            return List.of();
        }
        List<Path> missing = new ArrayList<>();
        for (Path p = parent; p != null && !Files.isDirectory(p); p = p.getParent()) {
            missing.add(0, p);
        }
        for (Path p : missing) {
            Files.createDirectory(p);
        }
        return missing;
    }

    /**
     * Concurrent mode: makes sure the parent directories of {@code file} exist and are durable.
     * Those missing are created and forced, the entry of each in its parent, under the write lock;
     * the check runs under the read lock, so a directory seen there was forced by the thread that
     * made it. Returns nothing to force afterwards.
     */
    private List<Path> ensureParentShared(Path file) throws IOException {
        Path parent = file.getParent();
        directories.readLock().lock();
        try {
            if (Files.isDirectory(parent)) {
                return List.of();
            }
        } finally {
            directories.readLock().unlock();
        }
        directories.writeLock().lock();
        try {
            for (Path d : ensureParent(file)) {
                forceDirectory(d.getParent());
            }
            return List.of();
        } finally {
            directories.writeLock().unlock();
        }
    }

    private static void forceDirectory(Path d) throws IOException {
        try (FileChannel ch = FileChannel.open(d, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    private interface FileVisitor {
        void visit(byte[] key, Path file);
    }

    private void walk(FileVisitor visitor) {
        try (Stream<Path> files = Files.walk(urlRoot)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                if (Files.isRegularFile(f) && !f.getFileName().toString().endsWith(TMP_SUFFIX)) {
                    StringBuilder url = new StringBuilder();
                    for (Path seg : urlRoot.relativize(f)) {
                        url.append('/').append(seg);
                    }
                    visitor.visit(url.toString().getBytes(StandardCharsets.UTF_8), f);
                }
            }
        } catch (IOException e) {
            throw new StoreException(NAME + ": cannot list " + urlRoot, e);
        }
        try (Stream<Path> files = Files.walk(hashRoot)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                String n = f.getFileName().toString();
                if (Files.isRegularFile(f) && !n.endsWith(TMP_SUFFIX)) {
                    visitor.visit(HEX.parseHex(n), f);
                }
            }
        } catch (IOException e) {
            throw new StoreException(NAME + ": cannot list " + hashRoot, e);
        }
    }

    private static byte[] read(Path file) {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new StoreException(NAME + ": cannot read " + file, e);
        }
    }

    private static String describe(byte[] key) {
        String url = urlPath(key);
        return url != null ? url : HEX.formatHex(key);
    }
}

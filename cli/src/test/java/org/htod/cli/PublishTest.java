package org.htod.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How a finished file is put in place ({@link Publish}), on file systems with hard links and without. */
class PublishTest {
    @TempDir
    Path dir;

    /** A link refused as exFAT and FAT refuse one (EPERM). */
    private static final Publish.Linker NOT_PERMITTED = (link, existing) -> {
        throw new FileSystemException(link.toString(), null, "Operation not permitted");
    };

    /** A file system whose provider makes no links at all. */
    private static final Publish.Linker UNSUPPORTED = (link, existing) -> {
        throw new UnsupportedOperationException("no hard links here");
    };

    private List<Path> files() throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.sorted().toList();
        }
    }

    /** {@code bytes} written under a fresh temporary name beside {@code target}. */
    private static Path written(Path target, byte[] bytes) throws Exception {
        Path tmp = Publish.temporary(target);
        Files.write(tmp, bytes);
        return tmp;
    }

    /**
     * Where the file system makes no hard links (FAT and exFAT refuse with EPERM, many FUSE
     * mounts with EOPNOTSUPP, some providers with UnsupportedOperationException), the finished
     * file is renamed into place: the target holds its bytes, and no temporary name is left. The
     * link's failure used to fail the command once the whole export or import was written, and
     * what was written was deleted.
     */
    @Test
    void withoutHardLinksTheFileIsRenamedIntoPlace() throws Exception {
        byte[] bytes = "{\"map\":\"m\",\"key\":\"a\",\"value\":\"1\"}\n".repeat(1000).getBytes(StandardCharsets.UTF_8);
        Path perm = dir.resolve("perm.jsonl");
        Publish.publish(written(perm, bytes), perm, NOT_PERMITTED);
        Path unsupported = dir.resolve("unsupported.jsonl");
        Publish.publish(written(unsupported, bytes), unsupported, UNSUPPORTED);
        assertArrayEquals(bytes, Files.readAllBytes(perm));
        assertArrayEquals(bytes, Files.readAllBytes(unsupported));
        assertEquals(List.of(perm, unsupported), files(), "no temporary file left");
    }

    /**
     * Without hard links too, a target that exists is never replaced: it is refused as the link
     * refuses it (TargetExistsException, exit 9), its bytes as they were, and the finished file
     * is left to the command, which deletes it.
     */
    @Test
    void withoutHardLinksATargetThatExistsIsStillRefused() throws Exception {
        Path target = dir.resolve("x.jsonl");
        Files.writeString(target, "someone else's\n");
        Path tmp = written(target, "mine\n".getBytes(StandardCharsets.UTF_8));
        Exit.TargetExistsException e = assertThrows(Exit.TargetExistsException.class,
                () -> Publish.publish(tmp, target, NOT_PERMITTED));
        assertEquals(9, Exit.of(e).code);
        assertTrue(e.getMessage().startsWith(target + " appeared while this command ran"), e.getMessage());
        assertEquals("someone else's\n", Files.readString(target));
        assertEquals("mine\n", Files.readString(tmp));
    }

    /** With hard links, the file takes the target's name, and a target that exists is refused. */
    @Test
    void withHardLinksTheFileIsLinkedIntoPlace() throws Exception {
        Path target = dir.resolve("x.jsonl");
        Publish.publish(written(target, "mine\n".getBytes(StandardCharsets.UTF_8)), target);
        assertEquals("mine\n", Files.readString(target));
        assertEquals(List.of(target), files(), "no temporary file left");
        Path again = written(target, "again\n".getBytes(StandardCharsets.UTF_8));
        assertEquals(9, Exit.of(assertThrows(Exit.TargetExistsException.class, () -> Publish.publish(again, target)))
                .code);
        assertEquals("mine\n", Files.readString(target));
    }
}

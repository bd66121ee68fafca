package org.htod.bench.workload;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.LongFunction;
import org.htod.bench.store.SizingHint;

/**
 * A set of objects as the paper's tests use them: URL-like keys and sizes from a {@link
 * TruncatedPareto}, all derived from a seed, so that object {@code i} has the same key, size and
 * content in every run and every store. Object {@code i} at {@code version} 0 is the object as
 * first written; versions 1, 2, … are the rewrites of the paper's Wn test, each with a fresh size
 * from the same distribution.
 *
 * <p>Two corpora stand for the paper's two workloads (means in KiB, 1 KiB = 1024 bytes):
 *
 * <ul>
 *   <li>{@link #OLYMPIC}: fragments of the 2000 Olympic Games site, 27,800 objects of mean 3.7 KiB.
 *       α = 1.0 and k = 512 bytes, the paper's own choice in §3.4 ("α = 1.0, k = 512 bytes,
 *       C = 2^10 grains, resulting in a mean size of 3.8 KB"); the cutoff C = 833,827 bytes (about
 *       1,629 grains) is solved so the mean is exactly 3.7 KiB.
 *   <li>{@link #PROXY}: the DEC proxy log of Fig. 13, α = 0.91 and mean 15.2 KiB. With k = 512 the
 *       cutoff would have to be 2.5 GB to reach that mean (and a sample mean would then swing by
 *       tens of percent), so the cutoff is 2 MiB (the paper: "objects whose sizes are beyond the
 *       cutoff size can be stored separately") and k = 1,715 bytes is solved for the mean. The
 *       paper's NT tests fill the store with 100,000 such objects.
 * </ul>
 */
public final class Corpus {

    private static final double KIB = 1024.0;

    /** The 2000 Olympic Games fragments: 27,800 objects, α 1.0, k 512 B, C 833,827 B, mean 3.7 KiB. */
    public static final Corpus OLYMPIC = new Corpus("olympic", 27_800,
            new TruncatedPareto(1.0, 512, 833_827), 3.7 * KIB, 0x01F7_2000_5EEDL, Corpus::olympicKey);

    /** The DEC proxy log: 100,000 objects, α 0.91, k 1,715 B, C 2 MiB, mean 15.2 KiB. */
    public static final Corpus PROXY = new Corpus("proxy", 100_000,
            new TruncatedPareto(0.91, 1_715, 2 * 1024 * 1024), 15.2 * KIB, 0x0DEC_1996_5EEDL, Corpus::proxyKey);

    /** Every corpus, by the names the benchmarks' {@code corpus} parameter takes. */
    public static final List<Corpus> ALL = List.of(OLYMPIC, PROXY);

    private static final long GOLDEN = 0x9E37_79B9_7F4A_7C15L;
    private static final long VERSION_MIX = 0xC2B2_AE3D_27D4_EB4FL;

    private final String name;
    private final int paperObjects;
    private final TruncatedPareto sizes;
    private final double targetMeanBytes;
    private final long seed;
    private final LongFunction<String> keys;

    private Corpus(String name, int paperObjects, TruncatedPareto sizes, double targetMeanBytes, long seed,
            LongFunction<String> keys) {
        this.name = name;
        this.paperObjects = paperObjects;
        this.sizes = sizes;
        this.targetMeanBytes = targetMeanBytes;
        this.seed = seed;
        this.keys = keys;
    }

    /** The corpus called {@code name} ({@code olympic} or {@code proxy}). */
    public static Corpus named(String name) {
        for (Corpus c : ALL) {
            if (c.name.equals(name)) {
                return c;
            }
        }
        throw new IllegalArgumentException("unknown corpus '" + name + "', expected olympic or proxy");
    }

    public String name() {
        return name;
    }

    /** How many objects the paper's test used. */
    public int paperObjects() {
        return paperObjects;
    }

    /** The size distribution. */
    public TruncatedPareto sizes() {
        return sizes;
    }

    /** The mean object size the paper reports for this workload, in bytes. */
    public double targetMeanBytes() {
        return targetMeanBytes;
    }

    /** The key of object {@code index} as text: a URL path. */
    public String keyString(long index) {
        return keys.apply(index);
    }

    /** The key of object {@code index}: its URL path in UTF-8. */
    public byte[] key(long index) {
        return keyString(index).getBytes(StandardCharsets.UTF_8);
    }

    /** The size of object {@code index} at {@code version}. */
    public int size(long index, int version) {
        return sizes.sample(random(index, version));
    }

    /** The content of object {@code index} at {@code version}: {@link #size} bytes of HTML-like text. */
    public byte[] value(long index, int version) {
        return Text.fill(size(index, version), index, version, random(index, version).nextInt(Text.LENGTH));
    }

    /** What a store sized up front needs to hold {@code objects} objects of this corpus. */
    public SizingHint sizingHint(long objects) {
        long sample = Math.min(objects, 2_000);
        long keyBytes = 0;
        for (long i = 0; i < sample; i++) {
            keyBytes += key(i).length;
        }
        int averageKey = (int) Math.max(1, Math.round((double) keyBytes / Math.max(1, sample)));
        return new SizingHint(Math.max(1, objects), averageKey, (int) Math.ceil(sizes.mean()),
                (int) Math.ceil(sizes.maximum()));
    }

    @Override
    public String toString() {
        return name + " (" + sizes + ")";
    }

    private SplittableRandom random(long index, int version) {
        return new SplittableRandom(seed + index * GOLDEN + version * VERSION_MIX);
    }

    // Keys ----------------------------------------------------------------------------------------

    private static final String[] SPORTS = {
        "athletics", "aquatics", "archery", "badminton", "baseball", "basketball", "boxing", "canoe",
        "cycling", "equestrian", "fencing", "football", "gymnastics", "handball", "hockey", "judo",
        "modern-pentathlon", "rowing", "sailing", "shooting", "softball", "table-tennis", "taekwondo",
        "tennis", "triathlon", "volleyball", "weightlifting", "wrestling"
    };

    private static final String[] OLYMPIC_PAGES = {"event", "results", "medals", "athlete", "news", "schedule"};

    /** {@code /olympics/day07/rowing/results-1234.html}: 17 days, 28 sports, a few page kinds. */
    private static String olympicKey(long i) {
        int day = 1 + (int) (i % 17);
        String sport = SPORTS[(int) ((i / 17) % SPORTS.length)];
        String page = OLYMPIC_PAGES[(int) ((i / (17L * SPORTS.length)) % OLYMPIC_PAGES.length)];
        return "/olympics/day" + (day < 10 ? "0" : "") + day + "/" + sport + "/" + page + "-" + i + ".html";
    }

    private static final String[] PROXY_DIRS = {"", "/images", "/news", "/cgi-bin", "/docs/manual", "/pub/software"};
    private static final String[] PROXY_EXTS = {"html", "gif", "jpg", "html", "txt", "ps", "class"};

    /** {@code /www.site123.com/images/object-4567.gif}: 997 hosts, a handful of paths and types. */
    private static String proxyKey(long i) {
        long host = (i * 7919) % 997;
        String dir = PROXY_DIRS[(int) ((i / 997) % PROXY_DIRS.length)];
        String ext = PROXY_EXTS[(int) (i % PROXY_EXTS.length)];
        return "/www.site" + host + ".com" + dir + "/object-" + i + "." + ext;
    }
}

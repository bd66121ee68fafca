package org.htod.testkit;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit 5 extension that verifies, after each test, every store the test opened, as Caffeine's
 * validation listener checks every cache a test made: the structural verifier ({@code
 * HtodStore.verify()}) on each store still open, which is then closed, and on each closed one,
 * reopened. A store that does not verify fails the test with the verifier's report.
 *
 * <p>Use: {@code @ExtendWith(VerifyStores.class)} on the test class, and an {@link OpenedStores}
 * parameter on the test (or a {@code @BeforeEach}) method, through which the test opens its stores:
 *
 * <pre>{@code
 * @ExtendWith(VerifyStores.class)
 * class MyTest {
 *     @Test
 *     void something(OpenedStores stores) {
 *         HtodStore s = stores.open(new MemoryDevice(), b -> b.durability(Durability.SYNC));
 *         ...
 *     }
 * }
 * }</pre>
 *
 * <p>A test that fails is not verified (its stores may be anywhere), but its stores are closed
 * and its files deleted all the same. Files come from {@link OpenedStores#newFile}, under the
 * directory named by the system property {@code htod.test.dir}.
 */
public final class VerifyStores implements ParameterResolver, AfterEachCallback {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(VerifyStores.class);

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == OpenedStores.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        // The test method's context, for the test and its @BeforeEach methods alike: one registry per test.
        return context.getStore(NAMESPACE).getOrComputeIfAbsent(OpenedStores.class, k -> new OpenedStores(dir()),
                OpenedStores.class);
    }

    private static Path dir() {
        return Path.of(System.getProperty("htod.test.dir", System.getProperty("java.io.tmpdir")));
    }

    @Override
    public void afterEach(ExtensionContext context) {
        OpenedStores stores = context.getStore(NAMESPACE).remove(OpenedStores.class, OpenedStores.class);
        if (stores == null) {
            return;
        }
        Optional<Throwable> failed = context.getExecutionException();
        List<String> problems = new ArrayList<>();
        if (failed.isEmpty()) {
            problems.addAll(stores.verifyAll());
        }
        stores.cleanUp(problems);
        if (problems.isEmpty()) {
            return;
        }
        AssertionError e = new AssertionError(problems.size() + " problem(s) with the stores of "
                + context.getDisplayName() + ":\n  " + String.join("\n  ", problems));
        if (failed.isPresent()) {
            failed.get().addSuppressed(e); // the test's own failure comes first
        } else {
            throw e;
        }
    }
}

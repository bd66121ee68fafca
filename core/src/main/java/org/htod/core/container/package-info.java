/**
 * The container: two superblock copies, the log region and the heap region of one file or
 * device. {@link org.htod.core.container.Container} creates, opens and updates it; the byte
 * layout is in {@code docs/FORMAT.md} and beside the constants of {@link
 * org.htod.core.container.Superblock}.
 */
package org.htod.core.container;

/* dvpp_orient: the eight EXIF orientations as plane transforms.
 *
 * Orientation o (1..8) says how the stored image must be transformed for
 * display: 1 identity, 2 mirror horizontally, 3 rotate 180, 4 mirror
 * vertically, 5 transpose, 6 rotate 90 clockwise, 7 transverse, 8 rotate
 * 90 counter-clockwise. 5..8 swap width and height.
 */
#ifndef DVPP_ORIENT_H
#define DVPP_ORIENT_H

#include <stddef.h>
#include <stdint.h>

/* Where displayed pixel (@dx, @dy) of a stored @w x @h image comes from
 * in stored coordinates. */
void dvpp_orient_source(unsigned orientation, uint32_t w, uint32_t h,
                        uint32_t dx, uint32_t dy, uint32_t *sx, uint32_t *sy);

/* Write the displayed form of a @w x @h plane of @elem-byte pixels from
 * @src (stride @ss) into @dst (stride @ds, sized for the displayed
 * dimensions). @src and @dst must not overlap. */
void dvpp_orient_plane(const uint8_t *src, size_t ss, uint8_t *dst, size_t ds,
                       uint32_t w, uint32_t h, unsigned elem, unsigned orientation);

/* Map a rectangle given in displayed coordinates of an image whose stored
 * size is @w x @h back to stored coordinates (x, y, rw, rh in place). */
void dvpp_orient_rect_to_stored(unsigned orientation, uint32_t w, uint32_t h,
                                uint32_t *x, uint32_t *y, uint32_t *rw,
                                uint32_t *rh);

#endif

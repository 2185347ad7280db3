//! The memory behind a dataset's large arrays (values, sparse indices, row
//! pointers): an owned vector, a read-only memory map of a `.pbin` file's
//! section, or memory lent by the caller (a NumPy array, say).
//!
//! Both read as a slice (`Deref<Target = [T]>`), so code that only reads
//! the data does not care which it is. The few places that change an array
//! call [`Storage::to_mut`], which first copies a mapped region into an
//! owned vector (copy on write): a mapping is never written through.

use std::any::Any;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use memmap2::Mmap;

/// An array of `T` that is either owned, borrowed from a shared, read-only
/// memory map, or lent by an owner that keeps it alive.
pub struct Storage<T>(Repr<T>);

enum Repr<T> {
    Owned(Vec<T>),
    Mapped(Mapped<T>),
    Lent(Lent<T>),
}

/// `len` elements at `ptr`, kept alive and unchanged by `owner` (see
/// [`Storage::lent`]).
struct Lent<T> {
    owner: Arc<dyn Any + Send + Sync>,
    ptr: *const T,
    len: usize,
}

/// `len` elements at `ptr`, inside the mapping `map` keeps alive.
struct Mapped<T> {
    map: Arc<Mmap>,
    ptr: *const T,
    len: usize,
}

// SAFETY: a `Mapped<T>` only hands out `&[T]` into a read-only mapping that
// its `Arc<Mmap>` keeps alive (and `Mmap` is itself `Send + Sync`), so
// sharing or sending it across threads is as safe as sharing `&[T]`, which
// needs `T: Sync`.
unsafe impl<T: Sync> Send for Mapped<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Mapped<T> {}
// SAFETY: a `Lent<T>` only hands out `&[T]` into memory that its owner
// (itself `Send + Sync`) keeps alive and unchanged, by the contract of
// `Storage::lent`: as safe to share or send as `&[T]`.
unsafe impl<T: Sync> Send for Lent<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Lent<T> {}

impl<T> Storage<T> {
    /// An empty owned array.
    pub const fn new() -> Self {
        Storage(Repr::Owned(Vec::new()))
    }

    /// The vector behind owned storage, to be filled again (None when the
    /// elements are mapped or lent).
    pub fn into_owned_vec(self) -> Option<Vec<T>> {
        match self.0 {
            Repr::Owned(v) => Some(v),
            _ => None,
        }
    }

    /// True when the elements live in a memory map rather than in memory
    /// this process owns.
    pub fn is_mapped(&self) -> bool {
        matches!(self.0, Repr::Mapped(_))
    }

    /// True when the elements are lent by an owner (see [`Storage::lent`]).
    pub fn is_lent(&self) -> bool {
        matches!(self.0, Repr::Lent(_))
    }

    /// `len` elements at `ptr`, used in place: memory that `owner` keeps
    /// alive, such as an array of the calling language's runtime, so that
    /// data the caller already holds in the right layout is not copied.
    /// Clones share it; [`Storage::to_mut`] copies it first.
    ///
    /// # Safety
    ///
    /// `ptr` must be aligned for `T` and point to `len` initialised
    /// elements (or be any aligned, non-null pointer when `len` is 0), which
    /// stay valid and are not written for as long as `owner` lives.
    pub unsafe fn lent(owner: Arc<dyn Any + Send + Sync>, ptr: *const T, len: usize) -> Self {
        Storage(Repr::Lent(Lent { owner, ptr, len }))
    }

    /// Elements the storage has room for: an owned vector's capacity, or a
    /// mapped region's length.
    pub fn capacity(&self) -> usize {
        match &self.0 {
            Repr::Owned(v) => v.capacity(),
            Repr::Mapped(m) => m.len,
            Repr::Lent(l) => l.len,
        }
    }

    /// The elements as a slice.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        match &self.0 {
            Repr::Owned(v) => v,
            // SAFETY: `ptr` and `len` were checked by `Storage::mapped` to
            // lie inside the mapping, aligned for `T`, and every bit pattern
            // is a valid `T` (`T: Pod` there); the mapping is read-only and
            // lives as long as `map`, which `self` holds.
            Repr::Mapped(m) => unsafe { std::slice::from_raw_parts(m.ptr, m.len) },
            // SAFETY: by the contract of `Storage::lent`, `ptr` points to
            // `len` aligned, initialised elements that stay valid and
            // unchanged while `owner`, which `self` holds, lives.
            Repr::Lent(l) => unsafe { std::slice::from_raw_parts(l.ptr, l.len) },
        }
    }
}

impl<T: Clone> Storage<T> {
    /// The same elements without a copy: owned elements are lent to the
    /// result, a mapped or lent region is shared as a clone shares it. For
    /// views that several workers read at once (one-vs-rest perceptrons
    /// trained side by side) where a clone would copy the data once each.
    ///
    /// # Safety
    ///
    /// The result, and every clone of it, must be dropped before `self` is
    /// dropped, moved or written.
    pub unsafe fn borrowed(&self) -> Self {
        match &self.0 {
            // SAFETY: the vector's elements are initialised and aligned, and
            // the caller keeps them alive and unwritten while the result lives.
            Repr::Owned(v) => unsafe { Storage::lent(Arc::new(()), v.as_ptr(), v.len()) },
            _ => self.clone(),
        }
    }

    /// The elements as an owned vector to change: a mapped or lent region
    /// is first copied into one (the memory itself is never written).
    pub fn to_mut(&mut self) -> &mut Vec<T> {
        if !matches!(self.0, Repr::Owned(_)) {
            self.0 = Repr::Owned(self.as_slice().to_vec());
        }
        match &mut self.0 {
            Repr::Owned(v) => v,
            Repr::Mapped(_) | Repr::Lent(_) => unreachable!("replaced by an owned copy above"),
        }
    }

    /// The elements as an owned vector (a copy when mapped or lent).
    pub fn into_vec(self) -> Vec<T> {
        match self.0 {
            Repr::Owned(v) => v,
            Repr::Mapped(_) | Repr::Lent(_) => self.as_slice().to_vec(),
        }
    }
}

impl<T: bytemuck::Pod> Storage<T> {
    /// `len` elements of `map` starting at byte `offset`, or `None` when
    /// they do not lie inside the mapping or are not aligned for `T` (the
    /// caller then reads them into owned memory instead). The bytes are
    /// used as they are, so they must already be in native byte order.
    pub fn mapped(map: Arc<Mmap>, offset: usize, len: usize) -> Option<Self> {
        let bytes = len.checked_mul(std::mem::size_of::<T>())?;
        let region = map.get(offset..offset.checked_add(bytes)?)?;
        let ptr = region.as_ptr();
        if !(ptr as usize).is_multiple_of(std::mem::align_of::<T>()) {
            return None;
        }
        Some(Storage(Repr::Mapped(Mapped {
            ptr: ptr.cast::<T>(),
            len,
            map,
        })))
    }
}

impl<T> Deref for Storage<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T> AsRef<[T]> for Storage<T> {
    fn as_ref(&self) -> &[T] {
        self
    }
}

impl<T> Default for Storage<T> {
    fn default() -> Self {
        Storage::new()
    }
}

impl<T> From<Vec<T>> for Storage<T> {
    fn from(v: Vec<T>) -> Self {
        Storage(Repr::Owned(v))
    }
}

/// An owned copy of `v`.
impl<T: Clone> From<&[T]> for Storage<T> {
    fn from(v: &[T]) -> Self {
        Storage(Repr::Owned(v.to_vec()))
    }
}

impl<T> FromIterator<T> for Storage<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Storage(Repr::Owned(iter.into_iter().collect()))
    }
}

impl<'a, T> IntoIterator for &'a Storage<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Owned storage is cloned; a mapped or lent region is shared (it is
/// read-only, so the clones cannot affect each other).
impl<T: Clone> Clone for Storage<T> {
    fn clone(&self) -> Self {
        match &self.0 {
            Repr::Owned(v) => Storage(Repr::Owned(v.clone())),
            Repr::Mapped(m) => Storage(Repr::Mapped(Mapped {
                map: Arc::clone(&m.map),
                ptr: m.ptr,
                len: m.len,
            })),
            Repr::Lent(l) => Storage(Repr::Lent(Lent {
                owner: Arc::clone(&l.owner),
                ptr: l.ptr,
                len: l.len,
            })),
        }
    }
}

/// Compares the elements, wherever they live.
impl<T: PartialEq> PartialEq for Storage<T> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: PartialEq> PartialEq<Vec<T>> for Storage<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: PartialEq> PartialEq<[T]> for Storage<T> {
    fn eq(&self, other: &[T]) -> bool {
        self.as_slice() == other
    }
}

impl<T: PartialEq, const N: usize> PartialEq<[T; N]> for Storage<T> {
    fn eq(&self, other: &[T; N]) -> bool {
        self.as_slice() == other
    }
}

/// Prints the elements, like a `Vec`.
impl<T: fmt::Debug> fmt::Debug for Storage<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_slice(), f)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// A read-only map of `bytes` (kept in a temporary file).
    fn map_of(bytes: &[u8]) -> Arc<Mmap> {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(bytes).unwrap();
        // SAFETY: the temporary file is private to this test and unchanged
        // while mapped.
        Arc::new(unsafe { Mmap::map(&f) }.unwrap())
    }

    fn le_bytes(v: &[u32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn owned_storage_reads_clones_and_changes_like_a_vec() {
        let mut s: Storage<u32> = vec![1, 2, 3].into();
        assert!(!s.is_mapped());
        assert_eq!(&s[..], &[1, 2, 3]);
        assert_eq!(s.len(), 3);
        assert_eq!(s.iter().sum::<u32>(), 6);
        assert_eq!((&s).into_iter().count(), 3);
        let c = s.clone();
        s.to_mut().push(4);
        assert_eq!(s, vec![1, 2, 3, 4]);
        assert_eq!(c, vec![1, 2, 3]);
        assert_eq!(format!("{c:?}"), "[1, 2, 3]");
        assert_eq!(Storage::<u32>::default().len(), 0);
        assert_eq!((0..3).collect::<Storage<u8>>().into_vec(), vec![0, 1, 2]);
    }

    #[cfg(target_endian = "little")]
    #[test]
    fn mapped_storage_reads_in_place_and_copies_on_write() {
        let map = map_of(&le_bytes(&[7, 8, 9, 10, 11]));
        let mut s = Storage::<u32>::mapped(Arc::clone(&map), 4, 3).unwrap();
        assert!(s.is_mapped());
        assert_eq!(&s[..], &[8, 9, 10]);
        assert_eq!(s.as_ptr() as usize, map.as_ptr() as usize + 4, "not copied");
        // A clone shares the mapping; equality compares elements.
        let c = s.clone();
        assert!(c.is_mapped());
        assert_eq!(c.as_ptr(), s.as_ptr());
        assert_eq!(c, Storage::from(vec![8, 9, 10]));
        assert_eq!(format!("{c:?}"), "[8, 9, 10]");
        // Changing copies first: the clone and the file's bytes are untouched.
        s.to_mut()[0] = 80;
        assert!(!s.is_mapped());
        assert_eq!(s, vec![80, 9, 10]);
        assert_eq!(c, vec![8, 9, 10]);
        assert_eq!(&map[4..8], &8u32.to_le_bytes());
        assert_eq!(c.clone().into_vec(), vec![8, 9, 10]);
        drop(map);
        // The mapping outlives the caller's handle while storage uses it.
        assert_eq!(c.iter().sum::<u32>(), 27);
    }

    #[test]
    fn regions_outside_the_map_or_misaligned_are_not_mapped() {
        let map = map_of(&le_bytes(&[1, 2, 3, 4]));
        assert!(Storage::<u32>::mapped(Arc::clone(&map), 0, 5).is_none());
        assert!(Storage::<u32>::mapped(Arc::clone(&map), 12, 2).is_none());
        assert!(Storage::<u32>::mapped(Arc::clone(&map), usize::MAX, 1).is_none());
        assert!(Storage::<u32>::mapped(Arc::clone(&map), 0, usize::MAX).is_none());
        assert!(Storage::<u32>::mapped(Arc::clone(&map), 2, 1).is_none());
        assert!(Storage::<u64>::mapped(Arc::clone(&map), 4, 1).is_none());
        let empty = Storage::<u64>::mapped(Arc::clone(&map), 16, 0).unwrap();
        assert!(empty.is_empty());
    }

    #[test]
    fn lent_storage_reads_in_place_keeps_its_owner_and_copies_on_write() {
        let owner: Arc<Vec<f64>> = Arc::new(vec![1.0, 2.0, 3.0, 4.0]);
        let ptr = owner[1..].as_ptr();
        // SAFETY: three elements from `ptr` lie in the vector `owner` holds,
        // which nothing writes.
        let mut s = unsafe { Storage::<f64>::lent(owner.clone(), ptr, 3) };
        assert!(s.is_lent() && !s.is_mapped());
        assert_eq!((s.as_ptr(), &s[..]), (ptr, &[2.0, 3.0, 4.0][..]));
        assert_eq!(s.capacity(), 3);
        let c = s.clone();
        assert_eq!((c.as_ptr(), Arc::strong_count(&owner)), (ptr, 3));
        s.to_mut()[0] = 20.0;
        assert!(!s.is_lent());
        assert_eq!(s, vec![20.0, 3.0, 4.0]);
        assert_eq!(owner[1], 2.0, "the lent memory is never written");
        assert_eq!(c.clone().into_vec(), vec![2.0, 3.0, 4.0]);
        drop((s, c));
        assert_eq!(Arc::strong_count(&owner), 1, "the owner is released");
    }

    #[test]
    fn storage_is_shared_across_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Storage<f32>>();
        send_sync::<Storage<usize>>();
    }
}

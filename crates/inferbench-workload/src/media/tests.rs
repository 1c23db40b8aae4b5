use super::*;

/// A fresh directory, removed when the guard drops.
fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("inferbench-media-{name}-"))
        .tempdir()
        .unwrap()
}

#[test]
fn urls_and_encoded_values_pass_through() {
    let mut r = MediaResolver::default();
    let u = r.resolve(MediaKind::Image, "https://x.test/a.png").unwrap();
    assert_eq!(&*u.content, "https://x.test/a.png");
    let d = r
        .resolve(MediaKind::Image, "data:image/png;base64,AAAA")
        .unwrap();
    assert_eq!(&*d.content, "data:image/png;base64,AAAA");
    let a = r.resolve(MediaKind::Audio, "wav,UklGRg==").unwrap();
    assert_eq!(&*a.content, "wav,UklGRg==");
    let v = r.resolve(MediaKind::Video, "http://h/v.mp4").unwrap();
    assert_eq!(&*v.content, "http://h/v.mp4");
    assert!(
        r.resolve(MediaKind::Image, "://nohost")
            .unwrap_err()
            .contains("scheme and a host")
    );
    assert!(
        r.resolve(MediaKind::Audio, "https://h/a.wav")
            .unwrap_err()
            .contains("inline")
    );
}

#[test]
fn local_files_are_encoded_once_and_checked() {
    let tmp = temp_dir("files");
    let d = tmp.path();
    let png = d.join("one.png");
    std::fs::write(&png, png::encode_rgb(1, 1, &[1, 2, 3])).unwrap();
    let mut r = MediaResolver::default();
    let a = r.resolve(MediaKind::Image, png.to_str().unwrap()).unwrap();
    assert!(a.content.starts_with("data:image/png;base64,iVBORw0KGgo"));
    let b = r.resolve(MediaKind::Image, png.to_str().unwrap()).unwrap();
    assert!(Arc::ptr_eq(&a.content, &b.content), "read and encoded once");

    let jpg = d.join("x.jpg");
    std::fs::write(&jpg, [0xFF, 0xD8, 0xFF, 0xE0, 0, 0]).unwrap();
    let j = r.resolve(MediaKind::Image, jpg.to_str().unwrap()).unwrap();
    assert!(j.content.starts_with("data:image/jpeg;base64,/9j/"));

    let gif = d.join("x.gif");
    std::fs::write(&gif, b"GIF89a").unwrap();
    let e = r
        .resolve(MediaKind::Image, gif.to_str().unwrap())
        .unwrap_err();
    assert!(e.contains("not a PNG or JPEG"), "{e}");

    let missing = d.join("missing.png");
    let e = r
        .resolve(MediaKind::Image, missing.to_str().unwrap())
        .unwrap_err();
    assert!(e.ends_with("missing.png: no such image file"), "{e}");

    let w = d.join("a.wav");
    std::fs::write(&w, wav::encode_pcm(8_000, 16, 1, &[0.0; 800])).unwrap();
    let a = r.resolve(MediaKind::Audio, w.to_str().unwrap()).unwrap();
    assert!(a.content.starts_with("wav,UklGR"));
    assert_eq!(a.seconds, Some(0.1));
    let e = r
        .resolve(MediaKind::Audio, d.join("a.flac").to_str().unwrap())
        .unwrap_err();
    assert!(e.contains("'.flac' is not a supported audio format"), "{e}");

    let v = d.join("v.webm");
    std::fs::write(&v, [0x1A, 0x45, 0xDF, 0xA3]).unwrap();
    let m = r.resolve(MediaKind::Video, v.to_str().unwrap()).unwrap();
    assert_eq!(&*m.content, "data:video/webm;base64,GkXfow==");
    let e = r
        .resolve(MediaKind::Video, d.join("v.avi").to_str().unwrap())
        .unwrap_err();
    assert!(e.contains("(mp4, webm)"), "{e}");

    // A directory given as a file is unreadable: the error names it.
    let dir_png = d.join("dir.png");
    std::fs::create_dir_all(&dir_png).unwrap();
    let e = r
        .resolve(MediaKind::Image, dir_png.to_str().unwrap())
        .unwrap_err();
    assert!(e.contains("dir.png: cannot read"), "{e}");
}

#[test]
fn audio_contents_split_into_format_and_data() {
    assert_eq!(split_audio("wav,AAA"), Some(("wav", "AAA")));
    assert_eq!(
        split_audio("data:audio/mp3;base64,BBB"),
        Some(("mp3", "BBB"))
    );
    assert_eq!(split_audio("data:audio/;base64,C"), Some(("wav", "C")));
    assert_eq!(split_audio("nocomma"), None);
}

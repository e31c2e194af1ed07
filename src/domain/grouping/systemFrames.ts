/**
 * Frames the app does not own, per platform: runtimes, frameworks and system libraries. The
 * group key leaves them out when an app frame remains (docs/decisions.md, "One bug, one group").
 * A project adds its own packages as in-app (projects.in_app_packages), which wins over this list.
 */

/** JavaScript: a frame's path (scheme and host dropped) containing one of these is a library's. */
const JS_PATH_PARTS = [
  'node_modules/',
  'node:',
  '/webpack/bootstrap',
  'webpack/runtime',
  '/zone.js',
  'zone.min.js',
  'zone-evergreen',
  'polyfills',
  '/vendor.',
  '/vendors~',
  '/vendors-',
  '/vendor-',
  '/chunk-vendors',
  '/framework-',
  '/framework.',
  '/react-dom',
  '/react.production',
  '/regenerator-runtime',
  '/core-js/',
  '/tslib',
  '/rxjs/',
  '/@babel/runtime',
  '/_next/static/chunks/framework',
  '/_next/static/chunks/webpack',
  '/_next/static/chunks/main-',
  'chrome-extension://',
  'moz-extension://',
  'safari-extension://',
  'safari-web-extension://',
];
/** JavaScript paths that are the runtime's own (Node's `internal/…`, natives, anonymous eval). */
const JS_PATH_PREFIXES = ['internal/', 'node:', '<anonymous>', 'native', '[native code]', 'events.js', 'timers.js'];

/** JVM and Android classes (and Kotlin's, Apple's Swift runtime has its own list below). */
const JVM_PREFIXES = [
  'java.',
  'javax.',
  'jdk.',
  'sun.',
  'com.sun.',
  'kotlin.',
  'kotlinx.',
  'android.',
  'androidx.',
  'com.android.',
  'dalvik.',
  'libcore.',
  'org.apache.harmony.',
  'com.google.android.',
  'org.jetbrains.',
  'scala.',
  'akka.',
  'org.springframework.',
  'org.hibernate.',
  'org.apache.',
  'org.eclipse.jetty.',
  'io.netty.',
  'reactor.',
  'io.reactivex.',
  'rx.',
  'okhttp3.',
  'retrofit2.',
  'org.junit.',
  'junit.',
  'net.bytebuddy.',
  'org.gradle.',
  'io.micronaut.',
  'io.quarkus.',
  'io.ktor.',
  'com.facebook.react.',
  'com.facebook.hermes.',
  'com.facebook.jni.',
  'com.swmansion.',
  'io.flutter.',
];

/** .NET namespaces. */
const DOTNET_PREFIXES = [
  'System.',
  'Microsoft.',
  'Mono.',
  'Xamarin.',
  'Android.Runtime.',
  'Java.Interop.',
  'UIKit.',
  'Foundation.',
  'ObjCRuntime.',
];

/** Native images of the OS and of runtimes (Apple dylibs and frameworks, Android and Linux libraries), by name prefix. */
const NATIVE_IMAGE_PREFIXES = [
  'libsystem_',
  'libdyld',
  'libobjc',
  'libc++',
  'libswift',
  'libdispatch',
  'libxpc',
  'dyld',
  'libpthread',
  'libc-',
  'libc.so',
  'libart.so',
  'libandroid_runtime.so',
  'libhwui.so',
  'libutils.so',
  'libbinder.so',
  'libgui.so',
  'libhermes',
  'libjsc.so',
  'libreactnativejni.so',
  'libflutter.so',
  'libandroid.so',
  'linker',
  'ld-linux',
  'libmonosgen',
  'libjsi.so',
  'libfbjni.so',
];
/** Native images matched whole (an app may be called "Reactor" or "Securely"). */
const NATIVE_IMAGES = new Set([
  'CoreFoundation',
  'UIKitCore',
  'UIKit',
  'Foundation',
  'GraphicsServices',
  'CoreGraphics',
  'QuartzCore',
  'WebKit',
  'JavaScriptCore',
  'SwiftUI',
  'SwiftUICore',
  'AppKit',
  'HIToolbox',
  'CFNetwork',
  'Security',
  'CoreData',
  'AVFoundation',
  'Combine',
  'FrontBoardServices',
  'BaseBoard',
  'RunningBoardServices',
  'CoreAutoLayout',
  'AttributeGraph',
  'MapKit',
  'Metal',
  'IOKit',
  'UIFoundation',
  'CoreText',
  'ImageIO',
  'CoreMedia',
  'AudioToolbox',
  'CoreLocation',
  'Network',
  'app_process64',
  'app_process32',
  'app_process',
  'hermes',
  'React',
  'Flutter',
  'ntdll.dll',
  'kernel32.dll',
  'KERNELBASE.dll',
  'ucrtbase.dll',
  'libc.so.6',
  'libc.so',
  'libm.so',
  'libdl.so',
]);
/** Native symbols that are how a process dies, not where it went wrong. */
const NATIVE_DEATH_SYMBOLS = new Set([
  '__pthread_kill',
  'pthread_kill',
  'abort',
  '__abort',
  '__assert_rtn',
  '__assert_fail',
  '__assert2',
  'raise',
  'tgkill',
  '__stack_chk_fail',
  'objc_exception_throw',
  '__exceptionPreprocess',
  '__cxa_throw',
  '__cxa_rethrow',
  'std::terminate',
  'std::__terminate',
  '_objc_terminate',
  'abort_message',
  'demangling_terminate_handler',
  '__gnu_cxx::__verbose_terminate_handler',
  'swift_unexpectedError',
  '_assertionFailure',
  'SIGABRT',
]);
/** Native symbols of runtimes (ART's interpreter and trampolines, thread start-up). */
const NATIVE_RUNTIME_SYMBOL_PREFIXES = [
  'art_quick_',
  'art::',
  'art_jni_',
  'ExecuteMterpImpl',
  'MterpInvoke',
  'nterp_',
  '__pthread_start',
  '__start_thread',
  '_JNIEnv::',
  'start_thread',
  '_pthread_start',
  'thread_start',
  '__libc_start_main',
  'CFRunLoop',
  '__CFRunLoop',
  'UIApplicationMain',
  '_dispatch_',
  'dispatch_',
  'objc_msgSend',
  '_objc_',
  'GSEventRunModal',
  '__CF',
];
/** Android native images under the OS's own directories. */
const ANDROID_SYSTEM_DIRS = ['/system/', '/apex/', '/vendor/', '/system_ext/', '/product/'];

export type FrameKind = 'js' | 'jvm' | 'dotnet' | 'native';

const startsWithAny = (s: string, list: readonly string[]) => list.some((p) => s.startsWith(p));

/** A project's own packages: a module or class that starts with one is the app's. */
export function isProjectPackage(module: string, inAppPackages: readonly string[]): boolean {
  return inAppPackages.some((p) => p !== '' && (module.startsWith(p) || module.includes(`/${p}`)));
}

/**
 * Whether a frame is the app's own. `location` is the frame's raw module as printed (a path,
 * a class, an image); `fn` its function, for natives whose image does not tell (libc's abort).
 */
export function isAppFrame(
  kind: FrameKind,
  location: string,
  fn: string | null,
  inAppPackages: readonly string[] = [],
): boolean {
  if (isProjectPackage(location, inAppPackages)) return true;
  switch (kind) {
    case 'js':
      return (
        location !== '' &&
        !startsWithAny(location, JS_PATH_PREFIXES) &&
        !JS_PATH_PARTS.some((p) => location.includes(p))
      );
    case 'jvm':
      return !startsWithAny(location, JVM_PREFIXES);
    case 'dotnet':
      return !startsWithAny(location, DOTNET_PREFIXES);
    case 'native': {
      if (fn !== null && (NATIVE_DEATH_SYMBOLS.has(fn) || startsWithAny(fn, NATIVE_RUNTIME_SYMBOL_PREFIXES)))
        return false;
      if (startsWithAny(location, ANDROID_SYSTEM_DIRS)) return false;
      const image = location.slice(location.lastIndexOf('/') + 1);
      return !NATIVE_IMAGES.has(image) && !startsWithAny(image, NATIVE_IMAGE_PREFIXES);
    }
  }
}
